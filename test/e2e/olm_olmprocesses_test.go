package e2e

import (
	"errors"
	"os"
	"path/filepath"
	"time"

	"github.com/example-inc/memcached-operator/hack/local-cluster/localcluster"
	"github.com/example-inc/memcached-operator/hack/local-cluster/process"
)

// olmNamespace is where olm and catalog run: the global catalog namespace,
// which is where the suite's CatalogSource lives.
const olmNamespace = "olm"

// olmStopTimeout is how long OLM's operators get to exit on SIGTERM.
const olmStopTimeout = 30 * time.Second

// olmOperators runs OLM's two operators as host processes, as the recipe in
// ../shared/toolchain.md does; both run throughout the OLM specs.
type olmOperators struct {
	tools   tools
	cluster *localcluster.Cluster
	// dir holds the logs and olm's serving certificate.
	dir string

	olm, catalog *process.Process
}

// spec runs an OLM binary against the cluster, logging to dir/<name>.log.
func (o *olmOperators) spec(binary, name string, args ...string) process.Spec {
	return process.Spec{
		Path: binary, Args: args, Dir: o.dir, LogPath: filepath.Join(o.dir, name+".log"),
		Env: append(os.Environ(), "KUBECONFIG="+o.cluster.KubeconfigPath()),
	}
}

// olmArgs: both operators serve health and metrics on a fixed port, :8080
// without TLS and :8443 with it, so olm gets a certificate from the cluster's
// CA (and, as --tls-cert requires, a client CA) to keep out of catalog's way.
func (o *olmOperators) olmArgs() ([]string, error) {
	cert, key, ca := filepath.Join(o.dir, "olm-tls.crt"), filepath.Join(o.dir, "olm-tls.key"), filepath.Join(o.dir, "cluster-ca.crt")
	if _, err := os.Stat(cert); errors.Is(err, os.ErrNotExist) {
		certPEM, keyPEM, err := o.cluster.IssueServingCertificate("localhost")
		if err != nil {
			return nil, err
		}
		if err := errors.Join(os.WriteFile(cert, certPEM, 0o600), os.WriteFile(key, keyPEM, 0o600),
			os.WriteFile(ca, o.cluster.CACertPEM(), 0o600)); err != nil {
			return nil, err
		}
	}
	return []string{"--namespace=" + olmNamespace, "--writeStatusName=",
		"--tls-cert=" + cert, "--tls-key=" + key, "--client-ca=" + ca}, nil
}

// startOLM starts olm-operator, logging to olm.log.
func (o *olmOperators) startOLM() error {
	args, err := o.olmArgs()
	if err != nil {
		return err
	}
	o.olm, err = process.Start(o.spec(o.tools.olm, "olm", args...))
	return err
}

func (o *olmOperators) startCatalog() error {
	var err error
	o.catalog, err = process.Start(o.spec(o.tools.catalog, "catalog", "--namespace="+olmNamespace, "--writeStatusName="))
	return err
}

func (o *olmOperators) stopAll() error {
	return errors.Join(o.olm.Stop(olmStopTimeout), o.catalog.Stop(olmStopTimeout))
}
