package devcluster

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/example-inc/memcached-operator/test/framework/harness"
)

func TestDevCluster(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Developer's Local Cluster Suite")
}

// workDir holds the clusters' files and every log; it is kept when a spec
// fails.
var workDir string

var _ = BeforeSuite(func() {
	harness.RequireTools("kubectl", "kustomize")
	workDir = harness.WorkDir("devcluster")
	harness.LogTo(workDir, "suite.log")
})

// eventually is Eventually with the suite's defaults: real pods start in
// seconds, but a loaded two-core machine can take a minute.
func eventually(ctx context.Context, f any) AsyncAssertion {
	return Eventually(f).WithContext(ctx).WithTimeout(2 * time.Minute).WithPolling(250 * time.Millisecond)
}
