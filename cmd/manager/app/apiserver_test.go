package app

import (
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/example-inc/memcached-operator/api/v1/gen"
	"github.com/example-inc/memcached-operator/hack/repo"
)

// startAPIServer starts kube-apiserver and etcd (envtest) with the
// Memcached CRD installed, stopped when the test ends, and returns their
// configuration with a client that knows the core and Memcached types.
func startAPIServer(t *testing.T, g Gomega) (*rest.Config, client.Client) {
	t.Helper()
	env := &envtest.Environment{
		BinaryAssetsDirectory: repo.ControlPlaneDir(),
		CRDInstallOptions:     envtest.CRDInstallOptions{Paths: []string{repo.CRDDir()}, ErrorIfPathMissing: true},
	}
	cfg, err := env.Start()
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = env.Stop() })
	k8s, err := client.New(cfg, client.Options{Scheme: gen.Scheme()})
	g.Expect(err).NotTo(HaveOccurred())
	return cfg, k8s
}
