package harness

import (
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"

	"github.com/go-logr/logr"
	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

// anySpecFailed is set by the ReportAfterEach below, registered when a suite
// imports this package.
var anySpecFailed atomic.Bool

var _ = ginkgo.ReportAfterEach(func(r ginkgo.SpecReport) {
	if r.Failed() {
		anySpecFailed.Store(true)
	}
})

// WorkDir creates the suite's work directory (the cluster's files, the
// operator binary and every log). It is removed when the suite ends, unless a
// spec or the setup failed: then its path is printed, for the logs.
func WorkDir(suite string) string {
	ginkgo.GinkgoHelper()
	dir, err := os.MkdirTemp("", "memcached-operator-"+suite+"-")
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	ginkgo.DeferCleanup(func() {
		if anySpecFailed.Load() || ginkgo.CurrentSpecReport().Failed() {
			fmt.Fprintf(os.Stderr, "%s: keeping %s (cluster/logs and the process logs)\n", suite, dir)
			return
		}
		_ = os.RemoveAll(dir)
	})
	return dir
}

// LogTo sends controller-runtime's and klog's logging in this process (the
// suite's clients, in-process controllers) to dir/name rather than the test
// output, and returns that logger.
func LogTo(dir, name string) logr.Logger {
	ginkgo.GinkgoHelper()
	f, err := os.Create(filepath.Join(dir, name))
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	ginkgo.DeferCleanup(f.Close)
	logger := zap.New(zap.WriteTo(f), zap.UseDevMode(true))
	ctrl.SetLogger(logger)
	klog.SetLogger(logger)
	return logger
}
