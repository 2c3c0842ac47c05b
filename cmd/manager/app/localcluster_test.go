package app

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
	"github.com/example-inc/memcached-operator/hack/local-cluster/localcluster"
	"github.com/example-inc/memcached-operator/hack/repo"
)

// startLocalCluster starts a local cluster (kube-apiserver and etcd, no
// node) with the Memcached CRD installed, stopped when the test ends, and
// returns it with a client of its API that knows the core and Memcached
// types.
func startLocalCluster(ctx context.Context, t *testing.T, g Gomega) (*localcluster.Cluster, client.Client) {
	t.Helper()
	cluster, err := localcluster.New(localcluster.Options{BinDir: repo.ControlPlaneDir()})
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = cluster.Stop() })
	g.Expect(cluster.Start(ctx)).To(Succeed())
	_, err = envtest.InstallCRDs(cluster.RestConfig(), envtest.CRDInstallOptions{
		Paths: []string{repo.CRDDir()}, ErrorIfPathMissing: true,
	})
	g.Expect(err).NotTo(HaveOccurred())
	scheme := runtime.NewScheme()
	g.Expect(clientgoscheme.AddToScheme(scheme)).To(Succeed())
	g.Expect(cachev1.AddToScheme(scheme)).To(Succeed())
	k8s, err := client.New(cluster.RestConfig(), client.Options{Scheme: scheme})
	g.Expect(err).NotTo(HaveOccurred())
	return cluster, k8s
}
