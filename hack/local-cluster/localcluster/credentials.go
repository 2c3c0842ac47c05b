package localcluster

import (
	"bytes"
	"context"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"net"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
)

// The cluster hands out identities and certificates, so that no suite signs
// certificates or assembles kubeconfigs of its own.

// CACertPEM is the cluster's CA: it signs the API server's serving
// certificate and every client certificate.
func (c *Cluster) CACertPEM() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pki == nil {
		return nil
	}
	return bytes.Clone(c.pki.ca.CertPEM)
}

// WriteUserKubeconfig writes a kubeconfig at path that authenticates as user
// in groups with a client certificate signed by the cluster's CA: a user of
// its own, whose requests the audit log and RBAC can tell apart.
func (c *Cluster) WriteUserKubeconfig(path, user string, groups ...string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pki == nil {
		return errors.New("localcluster: not started")
	}
	kp, err := issue(c.pki.ca, pkix.Name{CommonName: user, Organization: groups}, nil, nil, x509.ExtKeyUsageClientAuth)
	if err != nil {
		return err
	}
	return writeKubeconfig(path, c.serverURL(), c.pki.ca.CertPEM, certificateUser(kp))
}

// ServiceAccountToken is a bound token of ServiceAccount namespace/name,
// valid for two hours, from the TokenRequest API, as kubelet mounts into a
// pod.
func (c *Cluster) ServiceAccountToken(ctx context.Context, namespace, name string) (string, error) {
	c.mu.Lock()
	cs := c.cs
	c.mu.Unlock()
	if cs == nil {
		return "", errors.New("localcluster: not started")
	}
	tr, err := cs.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](2 * 60 * 60)},
	}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("token for ServiceAccount %s/%s: %w", namespace, name, err)
	}
	return tr.Status.Token, nil
}

// WriteServiceAccountKubeconfig writes a kubeconfig at path that
// authenticates as ServiceAccount namespace/name with a ServiceAccountToken:
// a process using it has exactly the permissions the account was granted.
func (c *Cluster) WriteServiceAccountKubeconfig(ctx context.Context, path, namespace, name string) error {
	token, err := c.ServiceAccountToken(ctx, namespace, name)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return writeKubeconfig(path, c.serverURL(), c.pki.ca.CertPEM, &clientcmdapi.AuthInfo{Token: token})
}

// IssueServingCertificate signs a serving certificate for names (DNS names
// or IP addresses) with the cluster's CA, for a server a test runs.
func (c *Cluster) IssueServingCertificate(names ...string) (certPEM, keyPEM []byte, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pki == nil {
		return nil, nil, errors.New("localcluster: not started")
	}
	var ips []net.IP
	var dns []string
	for _, n := range names {
		if ip := net.ParseIP(n); ip != nil {
			ips = append(ips, ip)
		} else {
			dns = append(dns, n)
		}
	}
	kp, err := issue(c.pki.ca, pkix.Name{CommonName: names[0]}, ips, dns, x509.ExtKeyUsageServerAuth)
	return kp.CertPEM, kp.KeyPEM, err
}
