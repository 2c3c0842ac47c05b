package olm

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"os"
	"path/filepath"
	"time"

	"github.com/example-inc/memcached-operator/test/operatorproc"
)

// olmNamespace is where olm and catalog run: the global catalog namespace,
// which is where the suite's CatalogSource lives.
const olmNamespace = "olm"

// olmStopTimeout is how long OLM's operators get to exit on SIGTERM.
const olmStopTimeout = 30 * time.Second

// olmOperators runs OLM's two operators as host processes, as the recipe in
// ../shared/toolchain.md does. olm is stopped and started again by the specs
// that patch what it manages; catalog runs throughout.
type olmOperators struct {
	tools      tools
	kubeconfig string
	// dir holds the logs and olm's serving certificate.
	dir string

	olm, catalog *operatorproc.Process
}

// olmArgs: both operators serve health and metrics on a fixed port, :8080
// without TLS and :8443 with it, so olm gets a certificate (and, as
// --tls-cert requires, a client CA) to keep out of catalog's way.
func (o *olmOperators) olmArgs() ([]string, error) {
	cert, key := filepath.Join(o.dir, "olm-tls.crt"), filepath.Join(o.dir, "olm-tls.key")
	if _, err := os.Stat(cert); errors.Is(err, os.ErrNotExist) {
		if err := writeSelfSignedCert(cert, key); err != nil {
			return nil, err
		}
	}
	return []string{"--namespace=" + olmNamespace, "--writeStatusName=",
		"--tls-cert=" + cert, "--tls-key=" + key, "--client-ca=" + cert}, nil
}

// startOLM starts olm-operator; it appends to olm.log across restarts.
func (o *olmOperators) startOLM() error {
	args, err := o.olmArgs()
	if err != nil {
		return err
	}
	o.olm, err = operatorproc.Start(operatorproc.Options{
		Binary: o.tools.olm, Kubeconfig: o.kubeconfig, LogPath: filepath.Join(o.dir, "olm.log"), Args: args, Dir: o.dir,
	})
	return err
}

// stopOLM stops olm-operator, so that it cannot undo what a spec patches.
func (o *olmOperators) stopOLM() error { return o.olm.Stop(olmStopTimeout) }

func (o *olmOperators) startCatalog() error {
	var err error
	o.catalog, err = operatorproc.Start(operatorproc.Options{
		Binary: o.tools.catalog, Kubeconfig: o.kubeconfig, LogPath: filepath.Join(o.dir, "catalog.log"),
		Args: []string{"--namespace=" + olmNamespace, "--writeStatusName="}, Dir: o.dir,
	})
	return err
}

func (o *olmOperators) stopAll() error {
	return errors.Join(o.olm.Stop(olmStopTimeout), o.catalog.Stop(olmStopTimeout))
}

// writeSelfSignedCert writes a throwaway certificate for olm's metrics
// server, which nothing in the suite calls.
func writeSelfSignedCert(certPath, keyPath string) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "olm-operator"},
		DNSNames:     []string{"localhost"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		IsCA:         true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	if err := os.WriteFile(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		return err
	}
	return os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600)
}
