package devcluster

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/example-inc/memcached-operator/test/framework/harness"
	"github.com/example-inc/memcached-operator/test/framework/images"
	"github.com/example-inc/memcached-operator/test/framework/localcluster"
)

var _ = Describe("make local-cluster LOCAL_CLUSTER_NODE=real", Ordered, func() {
	var dir, kubeconfig string

	// makeTarget runs a target with the real node, in the spec's directory.
	// Each spec starts an empty cluster: the objects a stopped cluster keeps
	// are the make-run suite's concern (test/e2e).
	makeTarget := func(ctx context.Context, target string) string {
		GinkgoHelper()
		return harness.Make(ctx, target, "LOCAL_CLUSTER_NODE=real", "LOCAL_CLUSTER_DIR="+dir, "LOCAL_CLUSTER_FRESH=true")
	}

	BeforeAll(func() {
		dir = filepath.Join(workDir, "make-local-cluster")
		kubeconfig = filepath.Join(dir, "kubeconfig")
		DeferCleanup(func(ctx SpecContext) {
			// Whatever a failed spec left running goes.
			makeTarget(ctx, "local-cluster-down")
		})
	})

	// runMemcached runs a memcached pod of the imported image and waits
	// until it is Running, so that there is a container to leave behind.
	runMemcached := func(ctx context.Context) {
		GinkgoHelper()
		_, err := harness.Kubectl(ctx, kubeconfig, nil, "run", "memcached", "--image="+images.MemcachedTag,
			"--restart=Never", "--", "memcached", "--memory-limit=16")
		Expect(err).NotTo(HaveOccurred())
		eventually(ctx, func() (string, error) {
			out, err := harness.Kubectl(ctx, kubeconfig, nil, "get", "pod", "memcached", "-o", "jsonpath={.status.phase}")
			return string(out), err
		}).Should(Equal("Running"))
	}

	It("starts a cluster whose node runs pods, and local-cluster-down leaves nothing behind", func(ctx SpecContext) {
		out := makeTarget(ctx, "local-cluster")
		Expect(out).To(ContainSubstring("export KUBECONFIG=" + kubeconfig))
		runMemcached(ctx)
		Expect(localcluster.NodeLeftovers(dir)).NotTo(BeEmpty(), "a running node is found by the check")

		makeTarget(ctx, "local-cluster-down")
		Expect(localcluster.NodeLeftovers(dir)).To(BeEmpty())
		Expect(filepath.Join(dir, "pid")).NotTo(BeAnExistingFile())
	}, SpecTimeout(5*time.Minute))

	It("cleans up after a launcher killed with SIGKILL: its containers outlive it until local-cluster-down", func(ctx SpecContext) {
		makeTarget(ctx, "local-cluster")
		runMemcached(ctx)
		pidText, err := os.ReadFile(filepath.Join(dir, "pid"))
		Expect(err).NotTo(HaveOccurred())
		pid, err := strconv.Atoi(strings.TrimSpace(string(pidText)))
		Expect(err).NotTo(HaveOccurred())

		By("killing the launcher: the kernel kills its components, not the containers")
		Expect(syscall.Kill(pid, syscall.SIGKILL)).To(Succeed())
		eventually(ctx, func() error { return syscall.Kill(pid, 0) }).Should(MatchError(syscall.ESRCH))
		left, err := localcluster.NodeLeftovers(dir)
		Expect(err).NotTo(HaveOccurred())
		Expect(strings.Join(left, "\n")).To(ContainSubstring("memcached --memory-limit=16"), "the container outlived the launcher")

		out := makeTarget(ctx, "local-cluster-down")
		Expect(out).To(ContainSubstring("nothing of a real node is left"))
		Expect(localcluster.NodeLeftovers(dir)).To(BeEmpty())
	}, SpecTimeout(5*time.Minute))
})
