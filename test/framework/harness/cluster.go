package harness

import (
	"context"
	"path/filepath"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"

	"github.com/example-inc/memcached-operator/test/framework/localcluster"
	"github.com/example-inc/memcached-operator/test/framework/operatorproc"
	"github.com/example-inc/memcached-operator/test/framework/repo"
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

// Build is an operator build running in the background.
type Build struct {
	binary string
	done   chan error
}

// BuildOperator starts building the operator into dir/manager, so that it
// builds while the cluster starts.
func BuildOperator(ctx context.Context, dir string) *Build {
	b := &Build{binary: filepath.Join(dir, "manager"), done: make(chan error, 1)}
	go func() {
		_, err := operatorproc.Build(ctx, b.binary)
		b.done <- err
	}()
	return b
}

// Wait waits for the build and returns the binary's path.
func (b *Build) Wait(ctx context.Context) string {
	ginkgo.GinkgoHelper()
	start := time.Now()
	gomega.Eventually(b.done).WithContext(ctx).Should(gomega.Receive(gomega.Succeed()))
	ginkgo.GinkgoWriter.Printf("operator built (waited %s)\n", time.Since(start).Round(time.Millisecond))
	return b.binary
}
