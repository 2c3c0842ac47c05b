package devcluster

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/example-inc/memcached-operator/hack/local-cluster/images"
	"github.com/example-inc/memcached-operator/hack/local-cluster/localcluster"
	"github.com/example-inc/memcached-operator/hack/repo"
	"github.com/example-inc/memcached-operator/test/framework/harness"
)

// The end-to-end suite on a cluster it did not start: a local cluster
// started apart with make local-cluster, as anyone's cluster would be, the
// operator's image imported as kind load would. The whole suite runs
// through its existing-cluster provider from a shell whose proxy variables
// name a proxy nobody serves, passes, and names the specs it left out for
// needing its own cluster on this host.
var _ = It("runs the end-to-end suite on a cluster started apart, naming the host specs it left out", func(ctx SpecContext) {
	dir := filepath.Join(workDir, "existing-cluster")
	const operatorRef = "localhost/memcached-operator:existing"
	operator, err := images.Operator(ctx, filepath.Join(workDir, "images", "existing-operator"), operatorRef)
	Expect(err).NotTo(HaveOccurred())

	By("starting the cluster with make local-cluster, the operator's image imported")
	DeferCleanup(func(ctx SpecContext) {
		harness.Make(ctx, "local-cluster-down", "LOCAL_CLUSTER_DIR="+dir)
		Expect(localcluster.NodeLeftovers(dir)).To(BeEmpty())
	})
	harness.Make(ctx, "local-cluster", "LOCAL_CLUSTER_DIR="+dir, "LOCAL_CLUSTER_FRESH=true", "LOCAL_CLUSTER_NODE=real",
		"LOCAL_CLUSTER_IMAGES="+operator.Archive)

	// The modules the suite builds from, fetched before the proxy would
	// stand in the way; the run below compiles what make test-e2e did.
	fetch := exec.CommandContext(ctx, "go", "list", "-deps", "-test", "./e2e")
	fetch.Dir = filepath.Join(repo.Root(), "test")
	Expect(fetch.CombinedOutput()).Error().NotTo(HaveOccurred())

	By("make test-e2e E2E_CLUSTER=existing, behind an unreachable proxy")
	// A shell of its own: not this run's make variables (MAKEFLAGS holds
	// those given on its command line, TEST_ARGS among them), cluster or
	// report, which counts this suite, not the one it runs.
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !slices.Contains([]string{"MAKEFLAGS", "MFLAGS", "MAKELEVEL", "TEST_ARGS", "LABELS", "TEST_REPORT", "KUBECONFIG"}, name) &&
			!strings.HasPrefix(name, "E2E_") {
			env = append(env, kv)
		}
	}
	env = append(append(env, "KUBECONFIG="+filepath.Join(dir, "kubeconfig"), "E2E_OPERATOR_IMAGE="+operatorRef), proxyEnv(unreachableProxy())...)
	out := harness.MakeWithEnv(ctx, env, "test-e2e", "E2E_CLUSTER=existing")
	AddReportEntry("make test-e2e E2E_CLUSTER=existing", out)
	Expect(out).To(MatchRegexp(`Ran [1-9]\d* of \d+ Specs`))
	Expect(out).To(ContainSubstring("SUCCESS!"))
	Expect(out).To(MatchRegexp(`left out, needing the suite's own cluster on this host \(label host\): [1-9]\d* specs`))
	for _, spec := range []string{
		"the operator as a pod, installed with kubectl apply and cert-manager runs the manager as the image's nonroot user",
		"the operator as a pod, installed with kubectl apply and cert-manager serves /metrics to a bound ServiceAccount token",
		"faults of the real node",
		"memcached on the real node runs a Memcached of size 3",
	} {
		Expect(out).To(ContainSubstring("left out: "+spec), "a host spec")
	}

	By("make test-e2e E2E_CLUSTER=existing LABELS=node, whose every spec needs this host: a failed run of none")
	none := exec.CommandContext(ctx, "make", "--no-print-directory", "test-e2e", "E2E_CLUSTER=existing", "LABELS=node")
	none.Dir, none.Env = repo.Root(), env
	noneOut, err := none.CombinedOutput()
	Expect(err).To(HaveOccurred(), "a run of no spec passed:\n%s", noneOut)
	Expect(string(noneOut)).To(ContainSubstring("Detected no specs ran"))
	Expect(string(noneOut)).To(ContainSubstring("left out: memcached on the real node runs a Memcached of size 3"))
	Expect(string(noneOut)).NotTo(ContainSubstring("left out: kubectl apply with cert-manager"), "a spec LABELS did not ask for")
	_, err = harness.Kubectl(ctx, filepath.Join(dir, "kubeconfig"), nil, "get", "crd", "certificates.cert-manager.io")
	Expect(err).To(MatchError(ContainSubstring("NotFound")), "cert-manager's CRDs, which the suite installed, removed")
}, SpecTimeout(15*time.Minute))
