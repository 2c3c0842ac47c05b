package app

import (
	"os"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/example-inc/memcached-operator/api/v1/gen"
	"github.com/example-inc/memcached-operator/hack/repo"
)

// startAPIServer starts kube-apiserver and etcd (envtest) with the
// Memcached CRD and crds installed, stopped when the test ends, and returns
// their configuration with a client that knows the core, Memcached and OLM
// types.
func startAPIServer(t *testing.T, g Gomega, crds ...*apiextensionsv1.CustomResourceDefinition) (*rest.Config, client.Client) {
	t.Helper()
	binDir := repo.ControlPlaneDir()
	_, err := os.Stat(filepath.Join(binDir, "kube-apiserver"))
	g.Expect(err).NotTo(HaveOccurred(), "no kube-apiserver in %s (run make control-plane)", binDir)
	env := &envtest.Environment{
		BinaryAssetsDirectory: binDir,
		CRDs:                  crds,
		CRDInstallOptions:     envtest.CRDInstallOptions{Paths: []string{repo.CRDDir()}, ErrorIfPathMissing: true},
	}
	cfg, err := env.Start()
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = env.Stop() })
	k8s, err := client.New(cfg, client.Options{Scheme: gen.Scheme(operatorsv1alpha1.AddToScheme)})
	g.Expect(err).NotTo(HaveOccurred())
	return cfg, k8s
}
