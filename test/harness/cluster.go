package harness

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"

	"github.com/example-inc/memcached-operator/test/fixtures"
	"github.com/example-inc/memcached-operator/test/localcluster"
	"github.com/example-inc/memcached-operator/test/operatorproc"
)

// StartCluster starts a local cluster with opts, stopped when the suite
// ends. BinDir defaults to the built control plane; the suite is skipped
// when a binary is missing from it.
func StartCluster(ctx context.Context, opts localcluster.Options) *localcluster.Cluster {
	ginkgo.GinkgoHelper()
	if opts.BinDir == "" {
		opts.BinDir = fixtures.ControlPlaneDir()
	}
	if missing := localcluster.MissingBinaries(opts.BinDir); len(missing) > 0 {
		ginkgo.Skip(fmt.Sprintf("control plane binaries %v missing from %s: run make control-plane", missing, opts.BinDir))
	}
	start := time.Now()
	cluster, err := localcluster.New(opts)
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	gomega.Expect(cluster.Start(ctx)).To(gomega.Succeed())
	ginkgo.DeferCleanup(cluster.Stop)
	ginkgo.GinkgoWriter.Printf("local cluster up in %s\n", time.Since(start).Round(time.Millisecond))
	return cluster
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
	go func() { b.done <- operatorproc.Build(ctx, b.binary) }()
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
