package e2e

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
	"github.com/example-inc/memcached-operator/hack/local-cluster/localcluster"
	"github.com/example-inc/memcached-operator/hack/repo"
	"github.com/example-inc/memcached-operator/test/framework/harness"
	"github.com/example-inc/memcached-operator/test/framework/scrape"
)

// The cluster's DNS (CoreDNS on the real node, see localcluster) as a
// Memcached's clients meet it, on the README's path: the sample applied
// with kubectl into default, a client pod of the busybox image the node
// comes with. The headless Service's name answers with every ready pod's
// address and each pod has a name of its own; a client stores and reads an
// item through the name status.endpoint gives, with the README's command.
var _ = Describe("the cluster's DNS on the real node", Ordered, Label(labelHost, labelNode, labelDNS), func() {
	const (
		ns = metav1.NamespaceDefault
		// clientPod is a pod of the busybox image that sleeps, to run
		// nslookup in.
		clientPod = "dns-client"
		domain    = localcluster.ClusterDomain
	)
	var (
		c      *realCluster
		sample *cachev1.Memcached
		pods   []corev1.Pod
	)

	// lookup returns a function that runs nslookup for the A records of
	// the fully qualified name in the client pod and returns their
	// addresses, or an error that holds what nslookup said.
	lookup := func(ctx context.Context, name string) func() ([]string, error) {
		return func() ([]string, error) {
			out, err := kubectl(ctx, nil, "-n", ns, "exec", clientPod, "--", "nslookup", "-type=a", name+".")
			if err != nil {
				return nil, fmt.Errorf("%w\n%s", err, out)
			}
			return answers(string(out)), nil
		}
	}

	BeforeAll(func(ctx SpecContext) {
		c = cluster
		op, err := c.startOperator(ctx, "dns-operator", ns, "RELATED_IMAGE_MEMCACHED="+memcachedA.Ref)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() error { return op.Stop(30 * time.Second) })

		By("applying the sample as the README does, and starting a client pod beside it")
		samples := filepath.Join(repo.Root(), "config", "samples")
		Expect(kubectl(ctx, nil, "apply", "-k", samples)).Error().NotTo(HaveOccurred())
		// default is every spec's: the sample and the client go when the
		// container ends.
		DeferCleanup(func(ctx SpecContext) {
			Expect(kubectl(ctx, nil, "delete", "--ignore-not-found", "-k", samples)).Error().NotTo(HaveOccurred())
			Expect(client.IgnoreNotFound(c.k8s.Delete(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: clientPod}}))).To(Succeed())
		})
		Expect(c.k8s.Create(ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: clientPod},
			Spec: corev1.PodSpec{
				Containers: []corev1.Container{{Name: "client", Image: clientImage, Command: []string{"sleep", "3600"}}},
				// sleep ignores SIGTERM; nothing is lost by killing it.
				TerminationGracePeriodSeconds: ptr.To[int64](0),
			},
		})).To(Succeed())
		sample = &cachev1.Memcached{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "memcached-sample"}}
		pods = c.serving(ctx, sample, 3, memcachedA.Ref)
		eventually(ctx, func(g Gomega) {
			p := &corev1.Pod{}
			g.Expect(c.k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: clientPod}, p)).To(Succeed())
			g.Expect(harness.PodReady(p)).To(BeTrue(), "pod %s ready", clientPod)
		}).Should(Succeed())
	}, NodeTimeout(5*time.Minute))

	It("gives pods the cluster's DNS server and search path in /etc/resolv.conf", func(ctx SpecContext) {
		out, err := kubectl(ctx, nil, "-n", ns, "exec", clientPod, "--", "cat", "/etc/resolv.conf")
		Expect(err).NotTo(HaveOccurred())
		Expect(strings.Split(strings.TrimSpace(string(out)), "\n")).To(ConsistOf(
			"search "+ns+".svc."+domain+" svc."+domain+" "+domain,
			"nameserver "+localcluster.ClusterDNSIP,
			"options ndots:5"))
	})

	It("answers the Service's name with every pod's address, and each pod's own name with its address", func(ctx SpecContext) {
		var ips []string
		for _, p := range pods {
			ips = append(ips, p.Status.PodIP)
		}
		service := fmt.Sprintf("%s.%s.svc.%s", sample.Name, ns, domain)
		eventually(ctx, lookup(ctx, service)).Should(ConsistOf(ips), "the headless Service's name")
		for _, p := range pods {
			// A pod without a hostname of its own (a Deployment's) is
			// named after its address in a headless Service's domain.
			name := strings.ReplaceAll(p.Status.PodIP, ".", "-") + "." + service
			eventually(ctx, lookup(ctx, name)).Should(ConsistOf(p.Status.PodIP), "pod %s's own name", p.Name)
		}
	}, SpecTimeout(2*time.Minute))

	It("stores and reads an item through the name status.endpoint gives, with the README's client command", func(ctx SpecContext) {
		got := &cachev1.Memcached{}
		Expect(c.k8s.Get(ctx, client.ObjectKeyFromObject(sample), got)).To(Succeed())
		host, _, err := net.SplitHostPort(got.Status.Endpoint)
		Expect(err).NotTo(HaveOccurred())
		Expect(host).To(Equal(sample.Name+"."+ns+".svc"), "a name only the cluster's DNS knows, through the pod's search path")

		out, err := c.throughClient(ctx, ns, got.Status.Endpoint, []byte("set greeting 0 0 5\r\nhello\r\nget greeting\r\nquit\r\n"))
		Expect(err).NotTo(HaveOccurred())
		AddReportEntry("the README's client, through "+got.Status.Endpoint, out)
		Expect(out).To(HavePrefix("STORED\r\nVALUE greeting 0 5\r\nhello\r\nEND\r\n"))
	}, SpecTimeout(2*time.Minute))

	It("shows a pod's metrics through kubectl port-forward, as the README does", func(ctx SpecContext) {
		// The README forwards local port 9150; any free one stands for it
		// here, and kubectl says which.
		pf := exec.CommandContext(ctx, harness.Tool("kubectl"), "--kubeconfig", c.KubeconfigPath(),
			"-n", ns, "port-forward", "pod/"+pods[0].Name, ":9150")
		stdout, err := pf.StdoutPipe()
		Expect(err).NotTo(HaveOccurred())
		Expect(pf.Start()).To(Succeed())
		DeferCleanup(func() { _ = pf.Process.Kill(); _ = pf.Wait() })
		line, err := bufio.NewReader(stdout).ReadString('\n')
		Expect(err).NotTo(HaveOccurred())
		var port int
		_, err = fmt.Sscanf(line, "Forwarding from 127.0.0.1:%d -> 9150", &port)
		Expect(err).NotTo(HaveOccurred(), "kubectl said %q", line)

		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", port))
		Expect(err).NotTo(HaveOccurred())
		defer func() { _ = resp.Body.Close() }()
		body, err := io.ReadAll(resp.Body)
		Expect(err).NotTo(HaveOccurred())
		m, err := scrape.Parse(string(body))
		Expect(err).NotTo(HaveOccurred())
		Expect(m.Sum("memcached_up", nil)).To(Equal(1.0), "the exporter of pod %s reaches its memcached", pods[0].Name)
		_, hasItems := m["memcached_current_items"]
		Expect(hasItems).To(BeTrue(), "the README greps memcached_current_items")
	}, SpecTimeout(time.Minute))

	It("refuses names outside the cluster's domain instead of forwarding them", func(ctx SpecContext) {
		// A forward would end in a timeout (nothing off this machine
		// answers); so does one lookup on a loaded machine, which a retry
		// gets past. Only a refusal passes.
		Eventually(func(g Gomega) {
			out, err := kubectl(ctx, nil, "-n", ns, "exec", clientPod, "--", "nslookup", "-type=a", "example.com.")
			g.Expect(err).To(HaveOccurred(), "%s", out)
			g.Expect(string(out)).To(ContainSubstring("REFUSED"))
		}).WithContext(ctx).WithTimeout(40 * time.Second).WithPolling(time.Second).Should(Succeed())
	}, SpecTimeout(time.Minute))

	It("gives no pod a MissingClusterDNS event", func(ctx SpecContext) {
		events, err := c.cs.CoreV1().Events(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
		Expect(err).NotTo(HaveOccurred())
		started := map[string]bool{}
		for _, e := range events.Items {
			Expect(e.Reason).NotTo(Equal("MissingClusterDNS"), "%s %s/%s: %s", e.Type, e.InvolvedObject.Namespace, e.InvolvedObject.Name, e.Message)
			if e.Reason == "Started" && e.InvolvedObject.Kind == "Pod" {
				started[e.InvolvedObject.Name] = true
			}
		}
		// The kubelet's events reach the API server: a missing one
		// would show.
		for _, p := range append(pods, corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: clientPod}}) {
			Expect(started).To(HaveKey(p.Name), "kubelet's Started event for pod %s", p.Name)
		}
	})
})

// answers are the addresses in nslookup's answer section: the Address lines
// after the first blank line (the lines before it name the server).
func answers(nslookup string) []string {
	_, answer, _ := strings.Cut(nslookup, "\n\n")
	var ips []string
	for _, l := range strings.Split(answer, "\n") {
		if ip, ok := strings.CutPrefix(l, "Address: "); ok {
			ips = append(ips, strings.TrimSpace(ip))
		}
	}
	return ips
}
