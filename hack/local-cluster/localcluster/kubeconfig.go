package localcluster

import (
	"os"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// contextName names the cluster, user and context in written kubeconfigs.
const contextName = "local-cluster"

// kubeconfig builds a self-contained kubeconfig (credentials embedded), so
// the file can be copied or read by tools that resolve paths differently.
func kubeconfig(server string, caPEM []byte, user *clientcmdapi.AuthInfo) *clientcmdapi.Config {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[contextName] = &clientcmdapi.Cluster{
		Server:                   server,
		CertificateAuthorityData: caPEM,
	}
	cfg.AuthInfos[contextName] = user
	cfg.Contexts[contextName] = &clientcmdapi.Context{Cluster: contextName, AuthInfo: contextName}
	cfg.CurrentContext = contextName
	return cfg
}

// certificateUser authenticates with a client certificate.
func certificateUser(client keyPair) *clientcmdapi.AuthInfo {
	return &clientcmdapi.AuthInfo{ClientCertificateData: client.CertPEM, ClientKeyData: client.KeyPEM}
}

// writeKubeconfig writes the file atomically (temporary file, then rename),
// so a reader polling for it never sees half a file.
func writeKubeconfig(path, server string, caPEM []byte, user *clientcmdapi.AuthInfo) error {
	data, err := clientcmd.Write(*kubeconfig(server, caPEM, user))
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// restConfig is the admin rest.Config, built from the same data as the
// kubeconfig file rather than by reading it back, so it cannot go stale.
func restConfig(server string, caPEM []byte, client keyPair) *rest.Config {
	return &rest.Config{
		Host: server,
		TLSClientConfig: rest.TLSClientConfig{
			CAData:   caPEM,
			CertData: client.CertPEM,
			KeyData:  client.KeyPEM,
		},
	}
}
