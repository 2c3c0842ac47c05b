package localcluster

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/example-inc/memcached-operator/certs"
)

// certValidity is long enough for a `make local-cluster` left running for
// weeks, and short enough that a leaked key is worth nothing.
const certValidity = 365 * 24 * time.Hour

// keyPair is a certificate with its private key, both PEM encoded.
type keyPair struct {
	CertPEM []byte
	KeyPEM  []byte
}

// issue signs a leaf certificate with the cluster's CA. Serving
// certificates get IPs and DNS names; client certificates get the user name
// as CN and the groups as O, which is how the API server's x509
// authenticator reads them.
func issue(ca *certs.CA, subject pkix.Name, ips []net.IP, dnsNames []string, usage x509.ExtKeyUsage) (keyPair, error) {
	now := time.Now()
	certPEM, keyPEM, err := ca.Issue(x509.Certificate{
		Subject:     subject,
		NotBefore:   now.Add(-time.Hour), // tolerate clock skew between processes
		NotAfter:    now.Add(certValidity),
		ExtKeyUsage: []x509.ExtKeyUsage{usage},
		IPAddresses: ips,
		DNSNames:    dnsNames,
	})
	return keyPair{CertPEM: certPEM, KeyPEM: keyPEM}, err
}

// pki is every credential of one cluster, written under <Dir>/pki.
type pki struct {
	dir string
	// ca signs both the serving certificates and the client certificates:
	// the cluster lives on loopback for minutes, so separate trust roots
	// would buy nothing.
	ca *certs.CA
	// serving is shared by the API server, controller manager and scheduler,
	// on 127.0.0.1 or the real node's bridge address.
	serving keyPair
	// kubelet is the real node's kubelet serving certificate.
	kubelet keyPair
	// clients holds one client certificate per component plus "admin". All
	// are in system:masters; distinct user names keep the audit trail and the
	// API server's logs readable.
	clients map[string]keyPair
}

// Paths of the files written by writePKI, relative to the pki directory.
const (
	caCertFile      = "ca.crt"
	caKeyFile       = "ca.key"
	servingCertFile = "serving.crt"
	servingKeyFile  = "serving.key"
	kubeletCertFile = "kubelet.crt"
	kubeletKeyFile  = "kubelet.key"
	// The API server's client certificate for calling kubelets.
	kubeletClientCertFile = "apiserver-kubelet-client.crt"
	kubeletClientKeyFile  = "apiserver-kubelet-client.key"
	// saKeyFile signs service account tokens, saPubFile verifies them.
	saKeyFile = "sa.key"
	saPubFile = "sa.pub"
)

// clientUsers maps each client identity to its user name. "apiserver" is
// the API server's own, for calling kubelet.
func clientUsers() map[string]string {
	return map[string]string{
		"admin":                   "localcluster-admin",
		"apiserver":               "kube-apiserver-kubelet-client",
		string(ControllerManager): "system:kube-controller-manager",
		string(Scheduler):         "system:kube-scheduler",
		string(Kwok):              "kwok",
		string(Kubelet):           "system:node:" + RealNodeName,
		string(KubeProxy):         "system:kube-proxy",
		string(CoreDNS):           "coredns",
	}
}

func newPKI(dir string) (*pki, error) {
	now := time.Now()
	ca, err := certs.NewCA("localcluster-ca", now.Add(-time.Hour), now.Add(certValidity))
	if err != nil {
		return nil, fmt.Errorf("creating CA: %w", err)
	}
	p := &pki{dir: dir, ca: ca, clients: map[string]keyPair{}}
	// The in-cluster names matter only to clients that reach the API server
	// through the kubernetes Service; nothing here does, but they keep the
	// certificate valid for tools that check.
	p.serving, err = issue(ca, pkix.Name{CommonName: "localcluster-serving"},
		[]net.IP{net.IPv4(127, 0, 0, 1), net.ParseIP(apiServerServiceIP), net.ParseIP(bridgeIP)},
		[]string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"},
		x509.ExtKeyUsageServerAuth)
	if err != nil {
		return nil, fmt.Errorf("creating serving certificate: %w", err)
	}
	p.kubelet, err = issue(ca, pkix.Name{CommonName: RealNodeName}, []net.IP{net.ParseIP(bridgeIP)}, []string{RealNodeName}, x509.ExtKeyUsageServerAuth)
	if err != nil {
		return nil, fmt.Errorf("creating the kubelet's serving certificate: %w", err)
	}
	for id, user := range clientUsers() {
		kp, err := issue(ca, pkix.Name{CommonName: user, Organization: []string{"system:masters"}}, nil, nil, x509.ExtKeyUsageClientAuth)
		if err != nil {
			return nil, fmt.Errorf("creating client certificate for %s: %w", id, err)
		}
		p.clients[id] = kp
	}
	return p, p.write()
}

func (p *pki) write() error {
	caKeyPEM, err := p.ca.KeyPEM()
	if err != nil {
		return err
	}
	saKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	saKeyDER, err := x509.MarshalPKCS8PrivateKey(saKey)
	if err != nil {
		return err
	}
	saPubDER, err := x509.MarshalPKIXPublicKey(saKey.Public())
	if err != nil {
		return err
	}
	if err := os.MkdirAll(p.dir, 0o700); err != nil {
		return err
	}
	files := map[string][]byte{
		caCertFile:            p.ca.CertPEM,
		caKeyFile:             caKeyPEM,
		servingCertFile:       p.serving.CertPEM,
		servingKeyFile:        p.serving.KeyPEM,
		kubeletCertFile:       p.kubelet.CertPEM,
		kubeletKeyFile:        p.kubelet.KeyPEM,
		kubeletClientCertFile: p.clients["apiserver"].CertPEM,
		kubeletClientKeyFile:  p.clients["apiserver"].KeyPEM,
		saKeyFile:             pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: saKeyDER}),
		saPubFile:             pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: saPubDER}),
	}
	for name, data := range files {
		if err := os.WriteFile(p.path(name), data, 0o600); err != nil {
			return err
		}
	}
	return nil
}

func (p *pki) path(name string) string {
	return filepath.Join(p.dir, name)
}
