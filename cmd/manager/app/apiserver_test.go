package app

import (
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
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
	scheme := runtime.NewScheme()
	g.Expect(clientgoscheme.AddToScheme(scheme)).To(Succeed())
	g.Expect(cachev1.AddToScheme(scheme)).To(Succeed())
	k8s, err := client.New(cfg, client.Options{Scheme: scheme})
	g.Expect(err).NotTo(HaveOccurred())
	return cfg, k8s
}
