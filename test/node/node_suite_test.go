package node

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"golang.org/x/sync/errgroup"

	"github.com/example-inc/memcached-operator/test/framework/harness"
	"github.com/example-inc/memcached-operator/test/framework/images"
	"github.com/example-inc/memcached-operator/test/framework/operatorproc"
)

func TestNode(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Real Node Suite")
}

// The images the suite imports into the real node. memcachedB is the same
// memcached under a second tag, for RELATED_IMAGE_MEMCACHED to move to.
const (
	memcachedTagB = "localhost/memcached:debian-b"
	operatorTag   = "localhost/memcached-operator:test"
)

var (
	// workDir holds the images, the clusters' files and every log; it is
	// kept when a spec fails.
	workDir string
	// operatorBinary is the manager built for the host.
	operatorBinary string
	// memcachedA, memcachedB and operatorImage are the image archives;
	// tlsReloaderImage is the sidecar of memcached pods that serve TLS,
	// exporterImage the metrics sidecar of those with monitoring on.
	memcachedA, memcachedB, operatorImage, tlsReloaderImage, exporterImage images.Image
)

var _ = BeforeSuite(func(ctx SpecContext) {
	workDir = harness.WorkDir("node")
	harness.LogTo(workDir, "suite.log")
	harness.RequireTools("kubectl", "kustomize")
	start := time.Now()
	dir := filepath.Join(workDir, "images")
	var g errgroup.Group
	g.Go(func() (err error) {
		operatorBinary, err = operatorproc.Build(ctx, filepath.Join(workDir, "manager"))
		return err
	})
	g.Go(func() (err error) {
		operatorImage, err = images.Operator(ctx, filepath.Join(dir, "operator"), operatorTag)
		return err
	})
	g.Go(func() (err error) {
		tlsReloaderImage, err = images.TLSReloader(ctx, filepath.Join(dir, "tls-reloader"), images.TLSReloaderTag)
		return err
	})
	g.Go(func() (err error) {
		exporterImage, err = images.MemcachedExporter(ctx, filepath.Join(dir, "memcached-exporter"), images.MemcachedExporterTag)
		return err
	})
	g.Go(func() (err error) {
		if memcachedA, err = images.Memcached(filepath.Join(dir, "a"), images.MemcachedTag); err != nil {
			return err
		}
		memcachedB, err = images.Memcached(filepath.Join(dir, "b"), memcachedTagB)
		return err
	})
	Expect(g.Wait()).To(Succeed())
	GinkgoWriter.Printf("operator built, images written in %s\n", time.Since(start).Round(time.Millisecond))
}, NodeTimeout(10*time.Minute))

// eventually is Eventually with the suite's defaults: real pods start in
// seconds, but a loaded two-core machine can take a minute.
func eventually(ctx context.Context, f any) AsyncAssertion {
	return Eventually(f).WithContext(ctx).WithTimeout(2 * time.Minute).WithPolling(250 * time.Millisecond)
}
