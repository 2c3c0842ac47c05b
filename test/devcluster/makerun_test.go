package devcluster

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/example-inc/memcached-operator/certs/certstest"
	"github.com/example-inc/memcached-operator/hack/local-cluster/fipsbuild"
	"github.com/example-inc/memcached-operator/hack/local-cluster/images"
	"github.com/example-inc/memcached-operator/hack/local-cluster/localcluster"
	"github.com/example-inc/memcached-operator/hack/local-cluster/process"
	"github.com/example-inc/memcached-operator/hack/repo"
	"github.com/example-inc/memcached-operator/test/framework/harness"
	"github.com/example-inc/memcached-operator/test/framework/memcache"
)

// The README's first command, as a new user runs it: no cluster configured
// (a fresh HOME, no KUBECONFIG), `make run` in one terminal, kubectl with
// the printed KUBECONFIG in another, Ctrl-C, then make local-cluster-down.
// Each spec checks what the user sees: kubectl's output, events and the
// operator's log, not only the API objects.
var _ = Describe("make run on a fresh machine", Ordered, func() {
	var (
		dir, kubeconfig, log string
		proxy                string
		env                  []string
		run                  *process.Process
	)
	// kubectl in the user's second terminal, with the same environment.
	kubectl := func(ctx context.Context, stdin []byte, args ...string) (string, error) {
		out, err := harness.KubectlWithEnv(ctx, env, kubeconfig, stdin, args...)
		return string(out), err
	}
	makeRun := func() *exec.Cmd {
		cmd := exec.Command("make", "--no-print-directory", "run", "LOCAL_CLUSTER_DIR="+dir)
		cmd.Env, cmd.Dir = env, repo.Root()
		return cmd
	}
	// launcherPID is the pid of the process that runs the cluster's
	// components, which it writes once the cluster is ready.
	launcherPID := func() int {
		GinkgoHelper()
		b, err := os.ReadFile(filepath.Join(dir, "pid"))
		Expect(err).NotTo(HaveOccurred())
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		Expect(err).NotTo(HaveOccurred())
		return pid
	}
	operatorLog := func() string {
		out, err := os.ReadFile(log)
		Expect(err).NotTo(HaveOccurred())
		return string(out)
	}
	BeforeAll(func(ctx SpecContext) {
		dir = filepath.Join(workDir, "make-run-cluster")
		kubeconfig = filepath.Join(dir, "kubeconfig")
		log = filepath.Join(workDir, "make-run.log")
		home := filepath.Join(workDir, "home")
		Expect(os.MkdirAll(home, 0o755)).To(Succeed())
		// A new user has set nothing: make run chooses the node itself
		// (make test-e2e's own choice is in LOCAL_CLUSTER_NODE*).
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "KUBECONFIG=") && !strings.HasPrefix(kv, "HOME=") && !strings.HasPrefix(kv, "LOCAL_CLUSTER_NODE") {
				env = append(env, kv)
			}
		}
		env = append(env, "HOME="+home, "GOCACHE="+goEnv("GOCACHE"), "GOPATH="+goEnv("GOPATH"))
		// On a corporate network: the usual proxy variables name a proxy
		// that cannot be reached (nothing listens on its loopback port), and
		// NO_PROXY does not name the cluster. make run, the operator it
		// starts and kubectl must reach the local cluster directly.
		proxy = unreachableProxy()
		env = append(env, proxyEnv(proxy)...)
		DeferCleanup(func(ctx SpecContext) {
			Expect(run.Kill()).To(Succeed())
			harness.Make(ctx, "local-cluster-down", "LOCAL_CLUSTER_DIR="+dir)
		})
		// Something else holds the webhook server's default port: make run
		// moves to the next free one rather than failing to bind.
		if l, err := net.Listen("tcp", "127.0.0.1:9443"); err == nil {
			DeferCleanup(l.Close)
		}
		cmd := makeRun()
		var err error
		// On a terminal, as a person runs it: Ctrl-C is then the terminal's.
		run, err = process.Start(process.Spec{Path: "make", Args: cmd.Args[1:], Env: cmd.Env, Dir: cmd.Dir, LogPath: log, Terminal: true})
		Expect(err).NotTo(HaveOccurred())
		Expect(run.WaitFor(ctx, "the operator's /readyz", process.HTTPOK("http://127.0.0.1:8081/readyz"))).To(Succeed())
	}, NodeTimeout(10*time.Minute))

	It("says in one line which node runs the pods and why: the real node as root, where memcached serves", func(ctx SpecContext) {
		out := operatorLog()
		if os.Geteuid() != 0 {
			Expect(out).To(ContainSubstring("\nnode: kwok's fake node, so pods are Ready but run nothing: not root: " +
				"the real node's kubelet and containerd need root (run make as root for memcached pods that serve)\n"))
			return
		}
		const line = "node: real (kubelet, containerd, runc), so memcached pods really serve: " +
			"running as root on Linux (LOCAL_CLUSTER_NODE=kwok gives fake pods instead)\n"
		Expect(out).To(ContainSubstring("\n" + line))
		readme, err := os.ReadFile(filepath.Join(repo.Root(), "README.md"))
		Expect(err).NotTo(HaveOccurred())
		Expect(string(readme)).To(ContainSubstring("\n"+line), "the README shows the line make run prints")
		Expect(strings.Count(out, "\nnode: ")).To(Equal(1), out)
		Expect(kubectl(ctx, nil, "get", "nodes", "-o", "name")).To(Equal("node/" + localcluster.RealNodeName + "\n"))
	})

	It("builds the cluster's launcher with the tests' build settings, not the manager's", func() {
		// A setting of the manager's build (the Go Cryptographic Module,
		// no cgo) in the launcher's would compile every package it imports
		// once more, a build of its own.
		settings, err := fipsbuild.Settings(filepath.Join(repo.Root(), "bin", "local-cluster"))
		Expect(err).NotTo(HaveOccurred())
		Expect(settings).NotTo(HaveKey("GOFIPS140"))
		Expect(settings).To(HaveKeyWithValue("CGO_ENABLED", goEnv("CGO_ENABLED")))
	})

	It("chooses kwok, saying why, for a user who is not root and while another cluster's real node runs", func(ctx SpecContext) {
		choose := func(args ...string) string {
			cmd := exec.CommandContext(ctx, args[0], append(args[1:], "node", "--dir", filepath.Join(workDir, "another-cluster"), "--packages", "runc")...)
			cmd.Env = env
			out, err := cmd.Output()
			Expect(err).NotTo(HaveOccurred(), "%s", out)
			return string(out)
		}
		tool := filepath.Join(repo.Root(), "bin", "local-cluster")
		notRoot := []string{tool}
		if os.Geteuid() == 0 {
			notRoot = []string{"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", tool}
		}
		Expect(choose(notRoot...)).To(Equal(
			"kwok not root: the real node's kubelet and containerd need root (run make as root for memcached pods that serve)\n"))
		if os.Geteuid() != 0 {
			return // no real node runs: the one of make run needs root
		}
		Expect(choose(tool)).To(MatchRegexp(`^kwok another local cluster's real node runs on this machine \(pid \d+ dir ` +
			regexp.QuoteMeta(dir) + `\); there is one per machine\n$`))
	})

	It("prints the commands for a second terminal once, and they work", func(ctx SpecContext) {
		out := operatorLog()
		Expect(strings.Count(out, "export KUBECONFIG=")).To(Equal(1), out)
		Expect(out).NotTo(ContainSubstring("restored"), "a first run restores nothing")
		Expect(out).To(ContainSubstring("  export KUBECONFIG=" + kubeconfig + "\n"))
		Expect(out).To(ContainSubstring("  bin/kubectl apply -k config/samples/\n"))
		Expect(out).To(MatchRegexp(`Port 9443 is in use: the webhook server listens on 127\.0\.0\.1:94\d\d\.`))
		Expect(kubectl(ctx, nil, "apply", "-k", filepath.Join(repo.Root(), "config", "samples"))).To(
			Equal("memcached.cache.example.com/memcached-sample created\n"))
		Eventually(func() (string, error) {
			return kubectl(ctx, nil, "get", "mc", "memcached-sample", "-o", "jsonpath={.status.readyReplicas}")
		}).WithContext(ctx).WithTimeout(time.Minute).Should(Equal("3"))
		if os.Geteuid() != 0 {
			return
		}
		// On the real node the pods are memcached: each stores and returns
		// an item (pod IPs are on this machine's bridge).
		ips, err := kubectl(ctx, nil, "get", "pods", "-l", "app.kubernetes.io/instance=memcached-sample", "-o", "jsonpath={.items[*].status.podIP}")
		Expect(err).NotTo(HaveOccurred())
		Expect(strings.Fields(ips)).To(HaveLen(3))
		for _, ip := range strings.Fields(ips) {
			Expect(memcache.RoundTrip(ctx, net.JoinHostPort(ip, "11211"), "make-run", []byte(ip))).To(Succeed(), "pod %s", ip)
		}
	}, SpecTimeout(2*time.Minute))

	It("hands the shell's proxy variables to memcached, while make run and kubectl reach the cluster directly", func(ctx SpecContext) {
		// Every spec of this container runs make run and kubectl behind
		// the unreachable proxy; the operator is not to bypass it for its
		// operands, only for the cluster.
		out, err := kubectl(ctx, nil, "get", "deploy", "memcached-sample", "-o",
			`jsonpath={range .spec.template.spec.containers[?(@.name=="memcached")].env[*]}{.name}={.value}{"\n"}{end}`)
		Expect(err).NotTo(HaveOccurred())
		for _, kv := range proxyEnv(proxy) {
			if name, _, _ := strings.Cut(kv, "="); name == strings.ToUpper(name) {
				Expect(strings.Split(out, "\n")).To(ContainElement(kv))
			}
		}
	}, SpecTimeout(time.Minute))

	It("runs the README's kubectl commands as printed, with the output it shows", func(ctx SpecContext) {
		steps := readmeKubectlSteps()
		Expect(steps).NotTo(BeEmpty())
		for _, s := range steps {
			out, err := kubectl(ctx, nil, s.args...)
			Expect(err).NotTo(HaveOccurred())
			got := strings.Split(strings.TrimSpace(out), "\n")
			Expect(got).To(HaveLen(len(s.output)), "bin/kubectl %s", strings.Join(s.args, " "))
			for i, want := range s.output {
				// Every column but an AGE at the end, which depends on the clock.
				g, w := strings.Fields(got[i]), strings.Fields(want)
				if len(w) > 0 && regexp.MustCompile(`^\d+[smhd]`).MatchString(w[len(w)-1]) {
					g, w = g[:len(g)-1], w[:len(w)-1]
				}
				Expect(g).To(Equal(w), "bin/kubectl %s, line %d", strings.Join(s.args, " "), i+1)
			}
		}
		out, err := kubectl(ctx, nil, "get", "mc", "-o", "wide")
		Expect(err).NotTo(HaveOccurred())
		Expect(strings.Fields(strings.SplitN(out, "\n", 2)[0])).To(Equal(
			[]string{"NAME", "SIZE", "MEMORY", "READY", "AVAILABLE", "DEGRADED", "ENDPOINT", "REASON", "MESSAGE", "WARMING", "AGE"}))
	}, SpecTimeout(time.Minute))

	It("leaves someone else's Deployment of its name alone, says why in kubectl get -o wide, one event and one log line", func(ctx SpecContext) {
		Expect(kubectl(ctx, nil, "create", "deployment", "web", "--image=registry.k8s.io/pause:3.10")).To(
			Equal("deployment.apps/web created\n"))
		Expect(kubectl(ctx, []byte(`{"apiVersion":"cache.example.com/v1","kind":"Memcached","metadata":{"name":"web"},"spec":{"size":2}}`),
			"apply", "-f", "-")).To(Equal("memcached.cache.example.com/web created\n"))
		msg := `a Deployment named "web" already exists and does not belong to this Memcached, so the operator leaves it alone ` +
			`and creates nothing; delete that Deployment or give the Memcached another name`
		Eventually(func() (string, error) {
			return kubectl(ctx, nil, "get", "mc", "web", "-o", "wide", "--no-headers")
		}).WithContext(ctx).WithTimeout(time.Minute).Should(MatchRegexp(`^web +2 +64Mi +False +True +web\.[a-z0-9-]+\.svc:11211 +NameInUse +` + regexp.QuoteMeta(msg)))

		// The operator looks again every 10 s or more, quietly: no event,
		// log line or stack trace per retry.
		Consistently(func(g Gomega) {
			events, err := kubectl(ctx, nil, "get", "events", "--field-selector", "involvedObject.name=web,involvedObject.kind=Memcached",
				"-o", `jsonpath={range .items[*]}{.reason}: {.message}{"\n"}{end}`)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(events).To(Equal("NameInUse: " + msg + "\n"))
			g.Expect(strings.Count(operatorLog(), "not reconciling: "+msg)).To(Equal(1))
			g.Expect(operatorLog()).NotTo(ContainSubstring("Reconciler error"))
		}).WithContext(ctx).WithTimeout(12 * time.Second).WithPolling(time.Second).Should(Succeed())
		Expect(kubectl(ctx, nil, "get", "deployment", "web", "-o", `jsonpath={.spec.template.spec.containers[*].image} {.metadata.labels}`)).To(
			Equal(`registry.k8s.io/pause:3.10 {"app":"web"}`), "their Deployment is untouched")
		Expect(kubectl(ctx, nil, "get", "service,pdb", "--field-selector", "metadata.name=web", "-o", "name")).To(BeEmpty())
	}, SpecTimeout(2*time.Minute))

	It("reports a hand scale of the Deployment as a repair, not a resize", func(ctx SpecContext) {
		Expect(kubectl(ctx, nil, "scale", "deploy/memcached-sample", "--replicas=7")).To(
			Equal("deployment.apps/memcached-sample scaled\n"))
		const repaired = "Repaired: set the Deployment back to 5 pods: it had been changed to 7 (spec.size sets the number of pods)"
		Eventually(func() (string, error) {
			return kubectl(ctx, nil, "get", "events", "--field-selector", "involvedObject.name=memcached-sample,involvedObject.kind=Memcached",
				"-o", `jsonpath={range .items[*]}{.reason}: {.message}{"\n"}{end}`)
		}).WithContext(ctx).WithTimeout(time.Minute).Should(Equal(
			// The README's kubectl scale of the Memcached was a resize.
			"Resized: resized from 3 to 5 pods\n" + repaired + "\n"))
		Expect(kubectl(ctx, nil, "get", "deploy", "memcached-sample", "-o", "jsonpath={.spec.replicas}")).To(Equal("5"))
		Expect(operatorLog()).To(ContainSubstring(strings.TrimPrefix(repaired, "Repaired: ")))
	}, SpecTimeout(2*time.Minute))

	It("gives one message, naming spec.size, through apply, patch, edit and scale", func(ctx SpecContext) {
		for _, tc := range []struct {
			stdin []byte
			args  []string
			want  string
		}{
			{[]byte(`{"apiVersion":"cache.example.com/v1","kind":"Memcached","metadata":{"name":"big"},"spec":{"size":40}}`),
				[]string{"apply", "-f", "-"}, `The Memcached "big" is invalid: spec.size: Invalid value: 40: must be no more than 16`},
			{[]byte(`{"apiVersion":"cache.example.com/v1","kind":"Memcached","metadata":{"name":"neg"},"spec":{"size":-1}}`),
				[]string{"apply", "--server-side", "-f", "-"}, `The Memcached "neg" is invalid: spec.size: Invalid value: -1: must be at least 1`},
			{nil, []string{"patch", "mc", "memcached-sample", "--type=merge", "-p", `{"spec":{"size":0}}`},
				`The Memcached "memcached-sample" is invalid: spec.size: Invalid value: 0: must be at least 1`},
			{nil, []string{"scale", "mc/memcached-sample", "--replicas=0"},
				`The Memcached "memcached-sample" is invalid: spec.size: Invalid value: 0: must be at least 1`},
			{nil, []string{"scale", "mc/memcached-sample", "--replicas=17"},
				`The Memcached "memcached-sample" is invalid: spec.size: Invalid value: 17: must be no more than 16`},
		} {
			_, err := kubectl(ctx, tc.stdin, tc.args...)
			Expect(err).To(MatchError(HaveSuffix(": " + tc.want + "\n")))
			Expect(strings.Count(err.Error(), "spec.size")).To(Equal(1), "one message: %v", err)
		}

		// kubectl edit keeps the refused edit in a file, the reason on top.
		edit := exec.CommandContext(ctx, harness.Tool("kubectl"), "--kubeconfig", kubeconfig, "edit", "mc", "memcached-sample")
		edit.Env = append(os.Environ(), `KUBE_EDITOR=sed -i 's/^\( *size:\).*/\1 40/'`)
		out, err := edit.CombinedOutput()
		Expect(err).To(HaveOccurred(), "%s", out)
		kept := regexp.MustCompile(`A copy of your changes has been stored to "([^"]+)"`).FindSubmatch(out)
		Expect(kept).NotTo(BeNil(), "%s", out)
		DeferCleanup(os.Remove, string(kept[1]))
		saved, err := os.ReadFile(string(kept[1]))
		Expect(err).NotTo(HaveOccurred())
		Expect(string(saved)).To(ContainSubstring(`# memcacheds.cache.example.com "memcached-sample" was not valid:` + "\n" +
			`# * spec.size: Invalid value: 40: must be no more than 16` + "\n"))
		Expect(kubectl(ctx, nil, "get", "mc", "memcached-sample", "-o", "jsonpath={.spec.size}")).To(Equal("5"))
	}, SpecTimeout(time.Minute))

	It("takes the default size when the size is left out, client-side or server-side, as for a Deployment's replicas", func(ctx SpecContext) {
		manifest := func(name, spec string) []byte {
			return fmt.Appendf(nil, "apiVersion: cache.example.com/v1\nkind: Memcached\nmetadata:\n  name: %s\n%s", name, spec)
		}
		for _, apply := range [][]string{{"apply", "-f", "-"}, {"apply", "--server-side", "-f", "-"}} {
			name := "omit" + strconv.Itoa(len(apply))
			Expect(kubectl(ctx, manifest(name, "spec:\n  size: 5\n"), apply...)).NotTo(BeEmpty())
			Expect(kubectl(ctx, manifest(name, "spec: {}\n"), apply...)).NotTo(BeEmpty())
			Expect(kubectl(ctx, nil, "get", "mc", name, "-o", "jsonpath={.spec.size}")).To(Equal("3"), "kubectl %v", apply)
		}
		Expect(kubectl(ctx, manifest("nospec", ""), "apply", "-f", "-")).To(Equal("memcached.cache.example.com/nospec created\n"))
		Expect(kubectl(ctx, nil, "get", "mc", "nospec", "-o", "jsonpath={.spec.size}")).To(Equal("3"))

		explain, err := kubectl(ctx, nil, "explain", "memcached.spec.size")
		Expect(err).NotTo(HaveOccurred())
		Expect(strings.Join(strings.Fields(explain), " ")).To(ContainSubstring(
			"Size is the number of memcached pods: 1 to 16, and 3 when omitted, unless the cluster administrator set another range or default"))
	}, SpecTimeout(time.Minute))

	It("warns through kubectl that a new memory restarts the pods, and refuses an item size memcached refuses", func(ctx SpecContext) {
		patch := exec.CommandContext(ctx, harness.Tool("kubectl"), "--kubeconfig", kubeconfig,
			"patch", "mc", "nospec", "--type=merge", "-p", `{"spec":{"memory":"128Mi"}}`)
		out, err := patch.CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), "%s", out)
		Expect(string(out)).To(Equal("Warning: changing spec.memory (64Mi to 128Mi) replaces every memcached pod, one at a time, " +
			"and each new pod starts with an empty cache\nmemcached.cache.example.com/nospec patched\n"))
		Expect(kubectl(ctx, nil, "get", "mc", "nospec", "-o", "jsonpath={.spec.resources.limits.memory}")).To(Equal("200Mi"))

		_, err = kubectl(ctx, nil, "patch", "mc", "nospec", "--type=merge", "-p", `{"spec":{"maxItemSize":"1m"}}`)
		Expect(err).To(MatchError(ContainSubstring(`The Memcached "nospec" is invalid: spec.maxItemSize: Invalid value: "1m": ` +
			`must be a multiple of 512Ki from 512Ki to 1Gi, such as 1Mi or 4Mi: memcached refuses other item sizes`)))
	}, SpecTimeout(time.Minute))

	It("logs for a person: plain lines, each action once, no stack traces", func() {
		out := operatorLog()
		Expect(out).NotTo(MatchRegexp(`(?m)^\{`), "no JSON lines")
		Expect(out).NotTo(MatchRegexp(`(?m)^\s+\S+\.go:\d+$`), "no stack traces")
		Expect(regexp.MustCompile(`created Deployment\s+\{"memcached": "default/memcached-sample"`).FindAllString(out, -1)).To(HaveLen(1))
		Expect(regexp.MustCompile(`resized from 3 to 5 pods\s+\{"memcached": "default/memcached-sample"`).FindAllString(out, -1)).To(HaveLen(1))
		Expect(out).NotTo(ContainSubstring("no such file or directory"), "a first run is no error")
	})

	It("refuses a second make run, saying that one runs already", func(ctx SpecContext) {
		out, err := makeRun().CombinedOutput()
		Expect(err).To(HaveOccurred(), "%s", out)
		m := regexp.MustCompile(`Another make run \(pid (\d+)\) is already running the operator`).FindSubmatch(out)
		Expect(m).NotTo(BeNil(), "%s", out)
		pid, err := strconv.Atoi(string(m[1]))
		Expect(err).NotTo(HaveOccurred())
		Expect(syscall.Getpgid(pid)).To(Equal(run.PID()), "the pid named is the first make run's")
	}, SpecTimeout(3*time.Minute))

	It("stops on Ctrl-C with exit status 0, leaving the cluster and the user's Memcached; local-cluster-down then leaves nothing", func(ctx SpecContext) {
		Expect(run.Interrupt()).To(Succeed())
		Eventually(run.Exited()).WithContext(ctx).WithTimeout(time.Minute).Should(BeClosed())
		Expect(run.Err()).NotTo(HaveOccurred(), "make run's exit\n%s", run.Tail(10))
		Expect(operatorLog()).NotTo(ContainSubstring("make: ***"))
		Expect(kubectl(ctx, nil, "get", "mutatingwebhookconfigurations", "-o", "name")).NotTo(
			ContainSubstring("memcached-operator-local"), "the stopped operator removed its webhooks")
		Expect(kubectl(ctx, nil, "get", "mc", "-o", "name")).To(ContainSubstring("memcached-sample"), "the cluster outlived make run")
		launcher := launcherPID()
		Expect(localcluster.NodeLeftovers(dir)).NotTo(BeEmpty(), "the check finds the running node and its pods")

		harness.Make(ctx, "local-cluster-down", "LOCAL_CLUSTER_DIR="+dir)
		Expect(syscall.Kill(launcher, 0)).To(MatchError(syscall.ESRCH), "the launcher is gone")
		Expect(filepath.Join(dir, "pid")).NotTo(BeAnExistingFile())
		Expect(localcluster.Leftovers(dir)).To(BeEmpty(), "no process or mount of the cluster is left")
		Expect(localcluster.NodeLeftovers(dir)).To(BeEmpty(), "nothing of a real node is left")
	}, SpecTimeout(3*time.Minute))

	It("starts the cluster again with the user's objects, saying so, or empty with LOCAL_CLUSTER_FRESH=true", func(ctx SpecContext) {
		// make run starts the cluster with the same tool, and passes this
		// line on.
		out := harness.Make(ctx, "local-cluster", "LOCAL_CLUSTER_DIR="+dir)
		Expect(out).To(ContainSubstring("export KUBECONFIG=" + kubeconfig))
		Expect(kubectl(ctx, nil, "get", "mc", "memcached-sample", "-o", "jsonpath={.spec.size}")).To(Equal("5"))
		Expect(kubectl(ctx, nil, "get", "deploy", "memcached-sample", "-o", "name")).To(Equal("deployment.apps/memcached-sample\n"))
		names, err := kubectl(ctx, nil, "get", "mc", "-A", "-o", "name")
		Expect(err).NotTo(HaveOccurred())
		Expect(out).To(ContainSubstring(fmt.Sprintf("\nrestored %d Memcached from the last run in %s; LOCAL_CLUSTER_FRESH=true starts the cluster empty\n",
			strings.Count(names, "\n"), dir)))
		Expect(harness.Make(ctx, "local-cluster-status", "LOCAL_CLUSTER_DIR="+dir)).To(MatchRegexp(
			`local cluster running \(pid %d\), node real, API server ready at https://127\.0\.0\.1:\d+\nexport KUBECONFIG=%s\n`,
			launcherPID(), regexp.QuoteMeta(kubeconfig)))
		harness.Make(ctx, "local-cluster-down", "LOCAL_CLUSTER_DIR="+dir)
		Expect(harness.Make(ctx, "local-cluster-status", "LOCAL_CLUSTER_DIR="+dir)).To(ContainSubstring("local cluster not running\n"))

		// Asked for by name this time, the node the spec after runs a pod on.
		out = harness.Make(ctx, "local-cluster", "LOCAL_CLUSTER_DIR="+dir, "LOCAL_CLUSTER_FRESH=true", "LOCAL_CLUSTER_NODE=real")
		Expect(out).NotTo(ContainSubstring("restored"))
		Expect(kubectl(ctx, nil, "get", "deployments,configmaps", "-n", "default", "-o", "name")).To(
			Equal("configmap/kube-root-ca.crt\n"), "nothing of the user's is left")
	}, SpecTimeout(4*time.Minute))

	It("cleans up after a launcher killed with SIGKILL: its containers outlive it until local-cluster-down", func(ctx SpecContext) {
		// The cluster the spec before started, empty: one pod to leave behind.
		Expect(kubectl(ctx, nil, "run", "memcached", "--image="+images.MemcachedTag, "--restart=Never", "--",
			"memcached", "--memory-limit=16")).To(Equal("pod/memcached created\n"))
		eventually(ctx, func() (string, error) {
			return kubectl(ctx, nil, "get", "pod", "memcached", "-o", "jsonpath={.status.phase}")
		}).Should(Equal("Running"))
		pid := launcherPID()

		By("killing the launcher: the kernel kills its components, not the containers")
		Expect(syscall.Kill(pid, syscall.SIGKILL)).To(Succeed())
		eventually(ctx, func() error { return syscall.Kill(pid, 0) }).Should(MatchError(syscall.ESRCH))
		left, err := localcluster.NodeLeftovers(dir)
		Expect(err).NotTo(HaveOccurred())
		Expect(strings.Join(left, "\n")).To(ContainSubstring("memcached --memory-limit=16"), "the container outlived the launcher")

		out := harness.Make(ctx, "local-cluster-down", "LOCAL_CLUSTER_DIR="+dir)
		Expect(out).To(ContainSubstring("nothing of a real node is left"))
		Expect(localcluster.NodeLeftovers(dir)).To(BeEmpty())
	}, SpecTimeout(3*time.Minute))
})

// kubectlStep is a command of the README's console blocks and the output
// shown under it.
type kubectlStep struct {
	args   []string
	output []string
}

// readmeKubectlSteps reads the `$ bin/kubectl ...` lines of README.md's
// console blocks.
func readmeKubectlSteps() []kubectlStep {
	GinkgoHelper()
	f, err := os.Open(filepath.Join(repo.Root(), "README.md"))
	Expect(err).NotTo(HaveOccurred())
	defer func() { _ = f.Close() }()
	var steps []kubectlStep
	inConsole := false
	for sc := bufio.NewScanner(f); sc.Scan(); {
		line := sc.Text()
		switch {
		case line == "```console":
			inConsole = true
		case strings.HasPrefix(line, "```"):
			inConsole = false
		case !inConsole:
		case strings.HasPrefix(line, "$ bin/kubectl "):
			steps = append(steps, kubectlStep{args: strings.Fields(strings.TrimPrefix(line, "$ bin/kubectl "))})
		case strings.HasPrefix(line, "$ "):
			Fail("README.md runs a command the test does not: " + line)
		case len(steps) > 0:
			steps[len(steps)-1].output = append(steps[len(steps)-1].output, line)
		}
	}
	return steps
}

// unreachableProxy is the URL of a proxy nobody serves: a loopback port
// nothing listens on, so that a connection through it fails at once and
// never leaves this machine.
func unreachableProxy() string {
	GinkgoHelper()
	ports, err := certstest.FreePorts(1)
	Expect(err).NotTo(HaveOccurred())
	return "http://127.0.0.1:" + strconv.Itoa(ports[0])
}

// proxyEnv is a corporate shell's proxy variables, in both cases: every
// request through proxy, but for a domain that names no cluster here.
func proxyEnv(proxy string) []string {
	var env []string
	for name, value := range map[string]string{"HTTP_PROXY": proxy, "HTTPS_PROXY": proxy, "NO_PROXY": ".corp.example.com"} {
		env = append(env, name+"="+value, strings.ToLower(name)+"="+value)
	}
	return env
}

// goEnv is a go env value of the test's own environment: the caches make
// run reuses under a fresh HOME, and the settings the tests are built with.
func goEnv(name string) string {
	GinkgoHelper()
	out, err := exec.Command("go", "env", name).Output()
	Expect(err).NotTo(HaveOccurred())
	return strings.TrimSpace(string(out))
}
