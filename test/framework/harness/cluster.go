package harness

import (
	"context"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"

	"github.com/example-inc/memcached-operator/hack/local-cluster/localcluster"
	"github.com/example-inc/memcached-operator/hack/repo"
)

// StartCluster starts a local cluster with opts, stopped when the suite
// ends. BinDir defaults to the built control plane; a missing binary fails
// the suite, naming what to build.
func StartCluster(ctx context.Context, opts localcluster.Options) *localcluster.Cluster {
	ginkgo.GinkgoHelper()
	if opts.BinDir == "" {
		opts.BinDir = repo.ControlPlaneDir()
	}
	start := time.Now()
	cluster, err := localcluster.New(opts)
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	gomega.Expect(cluster.Start(ctx)).To(gomega.Succeed())
	ginkgo.DeferCleanup(cluster.Stop)
	ginkgo.GinkgoWriter.Printf("local cluster up in %s\n", time.Since(start).Round(time.Millisecond))
	return cluster
}

// PodReady reports whether p's Ready condition is True.
func PodReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
