package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/example-inc/memcached-operator/test/framework/harness"
	"github.com/example-inc/memcached-operator/test/framework/localcluster"
	"github.com/example-inc/memcached-operator/test/framework/process"
	"github.com/example-inc/memcached-operator/test/framework/repo"
)

// The README's first command, as a new user runs it: no cluster configured
// (a fresh HOME, no KUBECONFIG), `make run` in one terminal, kubectl with
// the printed KUBECONFIG in another, Ctrl-C, then make local-cluster-down.
var _ = Describe("make run on a fresh machine", Ordered, func() {
	var (
		dir, kubeconfig, log string
		run                  *process.Process
	)
	kubectl := func(ctx context.Context, stdin []byte, args ...string) (string, error) {
		out, err := harness.Kubectl(ctx, kubeconfig, stdin, args...)
		return string(out), err
	}
	BeforeAll(func(ctx SpecContext) {
		dir = filepath.Join(workDir, "make-run-cluster")
		kubeconfig = filepath.Join(dir, "kubeconfig")
		log = filepath.Join(workDir, "make-run.log")
		home := filepath.Join(workDir, "home")
		Expect(os.MkdirAll(home, 0o755)).To(Succeed())
		var env []string
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "KUBECONFIG=") && !strings.HasPrefix(kv, "HOME=") {
				env = append(env, kv)
			}
		}
		DeferCleanup(func(ctx SpecContext) {
			Expect(run.Kill()).To(Succeed())
			harness.Make(ctx, "local-cluster-down", "LOCAL_CLUSTER_DIR="+dir)
		})
		var err error
		run, err = process.Start(process.Spec{
			Path: "make", Args: []string{"--no-print-directory", "run", "LOCAL_CLUSTER_DIR=" + dir},
			Env: append(env, "HOME="+home, "GOCACHE="+goEnv("GOCACHE"), "GOPATH="+goEnv("GOPATH")),
			Dir: repo.Root(), LogPath: log,
		})
		Expect(err).NotTo(HaveOccurred())
		Expect(run.WaitFor(ctx, "the operator's /readyz", process.HTTPOK("http://127.0.0.1:8081/readyz"))).To(Succeed())
	}, NodeTimeout(10*time.Minute))

	It("prints the commands for a second terminal, and they work", func(ctx SpecContext) {
		out, err := os.ReadFile(log)
		Expect(err).NotTo(HaveOccurred())
		Expect(string(out)).To(ContainSubstring("  export KUBECONFIG=" + kubeconfig + "\n"))
		Expect(string(out)).To(ContainSubstring("  bin/kubectl apply -k config/samples/\n"))
		Expect(kubectl(ctx, nil, "apply", "-k", filepath.Join(repo.Root(), "config", "samples"))).To(
			ContainSubstring("memcached.cache.example.com/memcached-sample created"))
		Eventually(func() (string, error) {
			return kubectl(ctx, nil, "get", "mc", "memcached-sample", "-o", "jsonpath={.status.readyReplicas}")
		}).WithContext(ctx).WithTimeout(time.Minute).Should(Equal("3"))
	}, SpecTimeout(2*time.Minute))

	It("refuses a bad Memcached through its webhooks", func(ctx SpecContext) {
		_, err := kubectl(ctx, []byte(`{"apiVersion":"cache.example.com/v1","kind":"Memcached","metadata":{"name":"big"},"spec":{"size":40}}`),
			"apply", "-f", "-")
		// What kubectl prints of the webhook's answer (the schema knows no
		// maximum; the size policy does).
		Expect(err).To(MatchError(ContainSubstring(`The Memcached "big" is invalid: spec.size: Invalid value: 40: must be no more than 16`)))
	})

	It("stops on Ctrl-C, leaving the cluster and the user's Memcached; local-cluster-down then leaves nothing", func(ctx SpecContext) {
		Expect(syscall.Kill(-run.PID(), syscall.SIGINT)).To(Succeed())
		Eventually(run.Exited()).WithContext(ctx).WithTimeout(time.Minute).Should(BeClosed())
		Expect(kubectl(ctx, nil, "get", "mutatingwebhookconfigurations", "-o", "name")).NotTo(
			ContainSubstring("memcached-operator-local"), "the stopped operator removed its webhooks")
		Expect(kubectl(ctx, nil, "get", "mc", "-o", "name")).To(ContainSubstring("memcached-sample"), "the cluster outlived make run")
		pid, err := os.ReadFile(filepath.Join(dir, "pid"))
		Expect(err).NotTo(HaveOccurred())
		launcher, err := strconv.Atoi(strings.TrimSpace(string(pid)))
		Expect(err).NotTo(HaveOccurred())

		harness.Make(ctx, "local-cluster-down", "LOCAL_CLUSTER_DIR="+dir)
		Expect(syscall.Kill(launcher, 0)).To(MatchError(syscall.ESRCH), "the launcher is gone")
		Expect(localcluster.NodeLeftovers(dir)).To(BeEmpty(), "no process of the cluster is left")
	}, SpecTimeout(3*time.Minute))
})

// goEnv is a go env value of the test's own environment, so that make run
// under a fresh HOME reuses the build and module caches.
func goEnv(name string) string {
	GinkgoHelper()
	out, err := exec.Command("go", "env", name).Output()
	Expect(err).NotTo(HaveOccurred())
	return strings.TrimSpace(string(out))
}
