package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/example-inc/memcached-operator/api/v1/gen"
	"github.com/example-inc/memcached-operator/certs"
	"github.com/example-inc/memcached-operator/hack/local-cluster/process"
	"github.com/example-inc/memcached-operator/test/framework/scrape"
	"github.com/example-inc/memcached-operator/webhooks"
	"github.com/example-inc/memcached-operator/webhooks/admissionlimit"
)

// nestedReview is an AdmissionReview of about size bytes for a Memcached
// create whose spec does not decode (a string for size) and carries an
// array of empty arrays: the body of issue #29, which a decoder into maps
// turns into some thirty times its size in memory.
func nestedReview(size int) []byte {
	const head = `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"f100d","kind":{"group":"cache.example.com","version":"v1","kind":"Memcached"},"resource":{"group":"cache.example.com","version":"v1","resource":"memcacheds"},"operation":"CREATE","userInfo":{"username":"flood"},"object":{"apiVersion":"cache.example.com/v1","kind":"Memcached","metadata":{"name":"x"},"spec":{"size":"x","pad":[[]`
	const tail = `]}}}}`
	n := (size - len(head) - len(tail)) / len(",[]")
	return []byte(head + strings.Repeat(",[]", n) + tail)
}

// floodBody is one kind of body the flood posts.
type floodBody struct {
	name string
	body []byte
	// chunked hides the length, as a client that sends no Content-Length.
	chunked bool
	// want are the statuses it may be answered with.
	want []int
}

var _ = Describe("a flood of large AdmissionReviews posted straight to the webhook server", Label(labelHost, labelFaults), func() {
	const (
		ns = "webhook-flood"
		// workers post at once, each at least minRounds bodies and on
		// until the Memcached writes are done.
		workers   = 16
		minRounds = 4
		// writes are the Memcached creates made through the API server
		// during the flood.
		writes = 8
		// maxPeakMiB bounds the operator's peak resident memory: half its
		// container's 256Mi limit. It runs at 40-90 MiB; the bodies it
		// reads and decodes at once hold some 20 MiB, which the collector
		// lets grow to twice that before it runs. Without the bounds
		// this flood took it past 1.6 GiB.
		maxPeakMiB = 128
	)

	It("keeps the operator's memory bounded while Memcached writes are admitted", func(ctx SpecContext) {
		cluster.namespace(ctx, ns, nil)
		// As in its pod: the memory limit from the Deployment.
		op := startOperator(ctx, "webhook-flood", operatorConfig{Namespace: ns, Webhooks: true,
			Env: []string{fmt.Sprintf("MEMORY_LIMIT=%d", 256<<20)}})
		ready, err := op.Usage()
		Expect(err).NotTo(HaveOccurred())
		poster := newPoster()
		url := certs.LocalWebhookURL(op.Ports().Webhook) + webhooks.MutatePath

		over := nestedReview(6 << 20)
		under := nestedReview(admissionlimit.DefaultMaxBodyBytes - 64<<10)
		bodies := []floodBody{
			{"6 MiB with its length", over, false, []int{http.StatusRequestEntityTooLarge}},
			// Without a length it is read up to the bound, in one of the
			// few slots for large bodies, or turned away while they are busy.
			{"6 MiB chunked", over, true, []int{http.StatusRequestEntityTooLarge, http.StatusTooManyRequests}},
			// Within the bound, so decoded: admitted for the schema to
			// refuse (HTTP 200), or turned away while every slot is busy.
			{"just under the bound", under, false, []int{http.StatusOK, http.StatusTooManyRequests}},
		}
		statuses := make([]sync.Map, len(bodies)) // status -> *atomic.Int64
		var (
			posted atomic.Int64
			mu     sync.Mutex
			errs   []error
			wg     sync.WaitGroup
		)
		stop := make(chan struct{})
		stopFlood := sync.OnceFunc(func() { close(stop); wg.Wait() })
		DeferCleanup(stopFlood)
		for w := range workers {
			wg.Go(func() {
				for i := 0; ; i++ {
					if i >= minRounds {
						select {
						case <-stop:
							return
						default:
						}
					}
					k := (w + i) % len(bodies)
					status, err := postBody(ctx, poster, url, bodies[k].body, bodies[k].chunked)
					if err != nil {
						mu.Lock()
						errs = append(errs, fmt.Errorf("%s: %w", bodies[k].name, err))
						mu.Unlock()
						return
					}
					n, _ := statuses[k].LoadOrStore(status, new(atomic.Int64))
					n.(*atomic.Int64).Add(1)
					posted.Add(1)
				}
			})
		}
		Eventually(posted.Load).WithTimeout(time.Minute).Should(BeNumerically(">=", workers),
			"the flood is under way before the writes start")

		var slowest time.Duration
		for i := range writes {
			start := time.Now()
			Expect(k8s.Create(ctx, fakeMemcached(ns, fmt.Sprintf("during-%d", i), gen.WithSize(1)))).To(Succeed(),
				"a Memcached write during the flood")
			slowest = max(slowest, time.Since(start))
		}
		duringFlood := posted.Load()
		stopFlood()
		Expect(errs).To(BeEmpty(), "every post of the flood is answered")

		after, err := op.Usage()
		Expect(err).NotTo(HaveOccurred())
		metrics, err := op.Metrics(ctx)
		Expect(err).NotTo(HaveOccurred())
		m, err := scrape.Parse(metrics)
		Expect(err).NotTo(HaveOccurred())
		report := fmt.Sprintf("%d bodies posted by %d workers (%d before the last write); VmRSS when ready %d MiB, "+
			"peak (VmHWM) %d MiB, after %d MiB; heap in use after %.1f MiB, heap obtained from the OS %.1f MiB; "+
			"slowest of %d Memcached creates %v",
			posted.Load(), workers, duringFlood, ready.RSSBytes>>20, after.PeakRSSBytes>>20, after.RSSBytes>>20,
			m.Sum("go_memstats_heap_inuse_bytes", nil)/(1<<20), m.Sum("go_memstats_heap_sys_bytes", nil)/(1<<20),
			writes, slowest.Round(time.Millisecond))
		for k, b := range bodies {
			statuses[k].Range(func(status, n any) bool {
				report += fmt.Sprintf("; %s: %d x HTTP %d", b.name, n.(*atomic.Int64).Load(), status)
				return true
			})
		}
		AddReportEntry("webhook server under a flood of large reviews", report)

		Expect(op.Running()).To(BeTrue(), op.Tail(30))
		Expect(m.Sum("go_gc_gomemlimit_bytes", nil)).To(BeNumerically("~", 0.8*(256<<20), 1),
			"the Go runtime's soft limit is 80%% of MEMORY_LIMIT")
		Expect(m.Sum("go_gc_gogc_percent", nil)).To(BeEquivalentTo(50), "the collector's target, with GOGC unset")
		Expect(after.PeakRSSBytes).To(BeNumerically("<", maxPeakMiB<<20),
			"peak VmRSS over %d MiB: %s", maxPeakMiB, report)
		for k, b := range bodies {
			statuses[k].Range(func(status, _ any) bool {
				Expect(b.want).To(ContainElement(status), "%s: %s", b.name, report)
				return true
			})
		}
		Expect(k8s.Create(ctx, fakeMemcached(ns, "after", gen.WithSize(1)))).To(Succeed(), "a Memcached write after the flood")
		Expect(process.Get(ctx, op.ProbeURL()+"/readyz")).To(Equal("ok"))
	}, NodeTimeout(5*time.Minute))
})

// postBody posts body to url as a review and returns the HTTP status; chunked
// hides its length.
func postBody(ctx context.Context, c *http.Client, url string, body []byte, chunked bool) (int, error) {
	var r io.Reader = bytes.NewReader(body)
	if chunked {
		r = io.MultiReader(r)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, r)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	defer func() { _ = resp.Body.Close() }()
	_, err = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, err
}
