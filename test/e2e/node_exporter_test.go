package e2e

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"slices"
	"strconv"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
	"github.com/example-inc/memcached-operator/api/v1/gen"
	"github.com/example-inc/memcached-operator/hack/local-cluster/images"
	"github.com/example-inc/memcached-operator/hack/local-cluster/process"
	"github.com/example-inc/memcached-operator/test/framework/memcache"
	"github.com/example-inc/memcached-operator/test/framework/operatorproc"
	"github.com/example-inc/memcached-operator/test/framework/scrape"
)

var _ = Describe("memcached metrics from the exporter sidecar on the real node", Ordered, Label(labelHost, labelNode, labelMonitoring), func() {
	const ns = "metrics"
	var (
		c  *realCluster
		op *operatorproc.Operator
	)

	BeforeAll(func(ctx SpecContext) {
		c = cluster
		op = c.operatorIn(ctx, "metrics-operator", ns)
	}, NodeTimeout(5*time.Minute))

	tailOnFailure(&op)

	It("answers memcached_up 1 from each pod's exporter, which counts exactly the sets, hits and misses sent to its pod", func(ctx SpecContext) {
		mc := gen.Memcached(ns, "plain", gen.WithSize(2), gen.WithMonitoring(true))
		start := time.Now()
		Expect(c.k8s.Create(ctx, mc)).To(Succeed())
		pods := c.exporting(ctx, mc, 2)
		AddReportEntry("monitored size 2 serving, exporters up", time.Since(start).Round(time.Millisecond).String())
		expectCommandsCounted(ctx, pods, func(ctx context.Context, p corev1.Pod) (*memcache.Client, error) {
			return memcache.Dial(ctx, net.JoinHostPort(p.Status.PodIP, "11211"))
		})
	}, SpecTimeout(4*time.Minute))

	It("with TLS on, counts exactly the commands sent over TLS, reading memcached's plain listener on loopback", func(ctx SpecContext) {
		const name = "secure"
		ca, serverName := c.tlsSecretFor(ctx, ns, name)
		mc := gen.Memcached(ns, name, gen.WithSize(2), gen.WithMonitoring(true), gen.WithTLS(name+"-tls"))
		start := time.Now()
		Expect(c.k8s.Create(ctx, mc)).To(Succeed())
		pods := c.exporting(ctx, mc, 2)
		AddReportEntry("monitored TLS size 2 serving, exporters up", time.Since(start).Round(time.Millisecond).String())
		expectCommandsCounted(ctx, pods, func(ctx context.Context, p corev1.Pod) (*memcache.Client, error) {
			return memcache.DialTLS(ctx, net.JoinHostPort(p.Status.PodIP, "11211"),
				&tls.Config{RootCAs: ca.Pool(), ServerName: serverName, MinVersion: tls.VersionTLS12})
		})
	}, SpecTimeout(4*time.Minute))
})

// exporting waits until mc serves from n pods (serving) whose exporter
// sidecar runs the image the node has, on the port named metrics, and
// answers memcached_up 1 there. It returns the pods.
func (c *realCluster) exporting(ctx context.Context, mc *cachev1.Memcached, n int) []corev1.Pod {
	GinkgoHelper()
	pods := c.serving(ctx, mc, n, memcachedA.Ref)
	for _, p := range pods {
		i := slices.IndexFunc(p.Spec.Containers, func(c corev1.Container) bool { return c.Name == "exporter" })
		Expect(i).To(BeNumerically(">=", 0), "pod %s has an exporter container", p.Name)
		exporter := p.Spec.Containers[i]
		Expect(exporter.Image).To(Equal(exporterImage.Ref), "pod %s: RELATED_IMAGE_MEMCACHED_EXPORTER's image", p.Name)
		Expect(exporter.Ports).To(ContainElement(And(HaveField("Name", "metrics"),
			HaveField("ContainerPort", BeEquivalentTo(images.ExporterPort)), HaveField("Protocol", corev1.ProtocolTCP))), "pod %s", p.Name)
		// Ready says the container started, not that its listener is up.
		eventually(ctx, func(g Gomega) {
			m, err := exporterMetrics(ctx, p)
			g.Expect(err).NotTo(HaveOccurred())
			up, err := onlyValue(m, "memcached_up", nil)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(up).To(BeEquivalentTo(1), "pod %s: memcached_up", p.Name)
		}).Should(Succeed())
	}
	return pods
}

// exporterMetrics is one scrape of pod's exporter at its pod IP, as
// Prometheus scrapes it.
func exporterMetrics(ctx context.Context, pod corev1.Pod) (scrape.Metrics, error) {
	text, err := process.Get(ctx, "http://"+net.JoinHostPort(pod.Status.PodIP, strconv.Itoa(images.ExporterPort))+"/metrics")
	if err != nil {
		return nil, err
	}
	return scrape.Parse(text)
}

// onlyValue is the value of the one series of family name that carries the
// labels in want; an error when there is none or more than one, so that a
// renamed series is not read as 0.
func onlyValue(m scrape.Metrics, name string, want map[string]string) (float64, error) {
	var values []float64
	for s := range m.Series(name, want) {
		values = append(values, scrape.Value(s))
	}
	if len(values) != 1 {
		return 0, fmt.Errorf("%d series of %s with %v, want 1", len(values), name, want)
	}
	return values[0], nil
}

// commandCounts are the exporter's counters of the commands a client sends.
type commandCounts struct {
	Sets, GetHits, GetMisses float64
}

// countedCommands scrapes pod's exporter for its commandCounts, failing
// unless memcached_up is 1.
func countedCommands(ctx context.Context, pod corev1.Pod) commandCounts {
	GinkgoHelper()
	m, err := exporterMetrics(ctx, pod)
	Expect(err).NotTo(HaveOccurred(), "pod %s", pod.Name)
	up, err := onlyValue(m, "memcached_up", nil)
	Expect(err).NotTo(HaveOccurred())
	Expect(up).To(BeEquivalentTo(1), "pod %s: memcached_up", pod.Name)
	var counts commandCounts
	for _, s := range []struct {
		into            *float64
		command, status string
	}{
		{&counts.Sets, "set", "hit"}, {&counts.GetHits, "get", "hit"}, {&counts.GetMisses, "get", "miss"},
	} {
		*s.into, err = onlyValue(m, "memcached_commands_total", map[string]string{"command": s.command, "status": s.status})
		Expect(err).NotTo(HaveOccurred(), "pod %s", pod.Name)
	}
	return counts
}

// expectCommandsCounted sends sets, then gets that hit and gets that miss,
// to the first of pods through dial, and expects that pod's exporter to
// count exactly those, and every other pod's exporter nothing: each reads
// its own pod's memcached. The exporters' own scrapes (stats commands) must
// count as no set and no get.
func expectCommandsCounted(ctx context.Context, pods []corev1.Pod, dial func(context.Context, corev1.Pod) (*memcache.Client, error)) {
	GinkgoHelper()
	const sets, hits, misses = 7, 5, 3
	before := map[string]commandCounts{}
	for _, p := range pods {
		before[p.Name] = countedCommands(ctx, p)
	}
	By("scraping every exporter again, with no client")
	for _, p := range pods {
		Expect(countedCommands(ctx, p)).To(Equal(before[p.Name]), "pod %s: a scrape counted as a command", p.Name)
	}

	target := pods[0]
	By(fmt.Sprintf("sending %d sets and %d gets (%d hits) to %s", sets, hits+misses, hits, target.Name))
	m, err := dial(ctx, target)
	Expect(err).NotTo(HaveOccurred())
	defer func() { _ = m.Close() }()
	value := func(i int) []byte { return []byte("counted " + strconv.Itoa(i)) }
	for i := range sets {
		Expect(m.Set(fmt.Sprintf("counted-%d", i), value(i))).To(Succeed())
	}
	for i := range hits {
		Expect(m.Get(fmt.Sprintf("counted-%d", i))).To(Equal(value(i)))
	}
	for i := range misses {
		_, err := m.Get(fmt.Sprintf("absent-%d", i))
		Expect(err).To(MatchError(memcache.ErrNotFound))
	}

	want := before[target.Name]
	want.Sets += sets
	want.GetHits += hits
	want.GetMisses += misses
	Expect(countedCommands(ctx, target)).To(Equal(want), "pod %s: counters grown by exactly what was sent", target.Name)
	for _, p := range pods[1:] {
		Expect(countedCommands(ctx, p)).To(Equal(before[p.Name]), "pod %s: sent nothing", p.Name)
	}
}
