package admissionlimit_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	admissionv1 "k8s.io/api/admission/v1"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/example-inc/memcached-operator/webhooks/admissionlimit"
)

// serve runs l's handler around next on a real HTTP server, so that bodies
// travel with and without a Content-Length as they do on the wire.
func serve(t *testing.T, l *admissionlimit.Limiter, next http.Handler) string {
	srv := httptest.NewServer(l.Handler(next))
	t.Cleanup(srv.Close)
	return srv.URL
}

type answer struct {
	Status     int
	RetryAfter string
	Body       string
}

// post sends body; chunked hides its length, as a client that sends no
// Content-Length.
func post(t *testing.T, url string, body []byte, chunked bool) answer {
	var r io.Reader = bytes.NewReader(body)
	if chunked {
		r = io.MultiReader(r)
	}
	// Bounded, so that a call the Limiter should have refused and let in
	// instead fails the test rather than hanging it.
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Post(url, "application/json", r)
	if err != nil {
		t.Errorf("posting %d bytes: %v", len(body), err)
		return answer{}
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Errorf("reading the answer: %v", err)
	}
	return answer{Status: resp.StatusCode, RetryAfter: resp.Header.Get("Retry-After"), Body: string(b)}
}

// echoLength answers with the length of the body it read.
var echoLength = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	_, _ = fmt.Fprint(w, len(b))
})

func TestRefusesBodiesOverTheBoundBeforeTheWebhookSeesThem(t *testing.T) {
	const limit = 1 << 20
	var calls atomic.Int32
	url := serve(t, admissionlimit.New(admissionlimit.Options{MaxBodyBytes: limit}),
		http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { calls.Add(1); echoLength(w, r) }))
	for _, tc := range []struct {
		name       string
		size       int
		chunked    bool
		wantStatus int
	}{
		{"over the bound, with its length", limit + 1, false, http.StatusRequestEntityTooLarge},
		{"over the bound, without a length", limit + 1, true, http.StatusRequestEntityTooLarge},
		{"ten times the bound, without a length", 10 * limit, true, http.StatusRequestEntityTooLarge},
		{"at the bound, with its length", limit, false, http.StatusOK},
		{"at the bound, without a length", limit, true, http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			before := calls.Load()
			a := post(t, url, bytes.Repeat([]byte("x"), tc.size), tc.chunked)
			g.Expect(a.Status).To(Equal(tc.wantStatus), a.Body)
			if tc.wantStatus == http.StatusOK {
				g.Expect(a.Body).To(Equal(strconv.Itoa(tc.size)), "the webhook reads the whole body")
			} else {
				g.Expect(calls.Load()).To(Equal(before), "the webhook never sees a body over the bound")
				g.Expect(a.Body).To(ContainSubstring("limit is 1048576 bytes"))
			}
		})
	}
}

// A real review goes through to controller-runtime's webhook and is
// answered as before.
func TestAnswersAReview(t *testing.T) {
	g := NewWithT(t)
	url := serve(t, admissionlimit.New(admissionlimit.Options{}), &admission.Webhook{
		Handler: admission.HandlerFunc(func(_ context.Context, req admission.Request) admission.Response {
			return admission.Allowed("seen " + string(req.UID))
		}),
	})
	body := `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"4a1","kind":{"group":"cache.example.com","version":"v1","kind":"Memcached"},"resource":{"group":"cache.example.com","version":"v1","resource":"memcacheds"},"operation":"CREATE","userInfo":{},"object":{"apiVersion":"cache.example.com/v1","kind":"Memcached","metadata":{"name":"x"},"spec":{"size":2}}}}`
	for _, chunked := range []bool{false, true} {
		a := post(t, url, []byte(body), chunked)
		g.Expect(a.Status).To(Equal(http.StatusOK))
		var review admissionv1.AdmissionReview
		g.Expect(json.Unmarshal([]byte(a.Body), &review)).To(Succeed())
		g.Expect(review.Response.Allowed).To(BeTrue())
		g.Expect(review.Response.UID).To(BeEquivalentTo("4a1"))
		g.Expect(review.Response.Result.Message).To(Equal("seen 4a1"))
	}
}

// blocking is a webhook that holds each call until released, counting the
// calls inside it.
type blocking struct {
	inside  atomic.Int32
	release chan struct{}
}

// serveBlocking serves a blocking webhook behind a Limiter with opts. The
// calls still held are let go before the server waits for them to end.
func serveBlocking(t *testing.T, opts admissionlimit.Options) (*blocking, string) {
	b := &blocking{release: make(chan struct{})}
	url := serve(t, admissionlimit.New(opts), b)
	t.Cleanup(func() { close(b.release) })
	return b, url
}

func (b *blocking) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b.inside.Add(1)
	defer b.inside.Add(-1)
	<-b.release
	echoLength(w, r)
}

// async posts in the background and delivers the answer.
func async(t *testing.T, url string, body []byte) <-chan answer {
	c := make(chan answer, 1)
	go func() { c <- post(t, url, body, false) }()
	return c
}

func TestBoundsTheCallsHandledAtOnce(t *testing.T) {
	small, large := []byte("{}"), bytes.Repeat([]byte("x"), 100<<10)
	opts := admissionlimit.Options{SmallBodyBytes: 64 << 10, MaxInFlight: 2, MaxLargeInFlight: 1}

	t.Run("the excess is refused with 429 and Retry-After once the wait is over", func(t *testing.T) {
		g := NewWithT(t)
		opts := opts
		opts.QueueWait = 100 * time.Millisecond
		hook, url := serveBlocking(t, opts)
		held := []<-chan answer{async(t, url, small), async(t, url, small)}
		g.Eventually(hook.inside.Load).Should(BeEquivalentTo(2))

		a := post(t, url, small, false)
		g.Expect(a.Status).To(Equal(http.StatusTooManyRequests), a.Body)
		g.Expect(a.RetryAfter).To(Equal("1"), "the API server's client retries a 429 only with Retry-After")

		// Large bodies, and bodies of unknown length, have slots of
		// their own: a flood of them leaves the small calls alone, and
		// the other way round.
		held = append(held, async(t, url, large))
		g.Eventually(hook.inside.Load).Should(BeEquivalentTo(3))
		for name, a := range map[string]answer{
			"large":            post(t, url, large, false),
			"small, no length": post(t, url, small, true),
		} {
			g.Expect(a.Status).To(Equal(http.StatusTooManyRequests), "%s: %s", name, a.Body)
		}
		g.Expect(hook.inside.Load()).To(BeEquivalentTo(3), "never more than the slots inside")

		g.Eventually(hook.release).Should(BeSent(struct{}{}))
		g.Eventually(hook.release).Should(BeSent(struct{}{}))
		g.Eventually(hook.release).Should(BeSent(struct{}{}))
		for _, c := range held {
			g.Eventually(c).Should(Receive(HaveField("Status", http.StatusOK)))
		}
	})

	t.Run("the excess waits for a slot", func(t *testing.T) {
		g := NewWithT(t)
		opts := opts
		opts.QueueWait = time.Minute
		hook, url := serveBlocking(t, opts)
		held := []<-chan answer{async(t, url, small), async(t, url, small)}
		g.Eventually(hook.inside.Load).Should(BeEquivalentTo(2))

		waiting := async(t, url, small)
		g.Consistently(hook.inside.Load).WithTimeout(200*time.Millisecond).Should(BeEquivalentTo(2), "the third waits")
		g.Eventually(hook.release).Should(BeSent(struct{}{}))
		g.Eventually(hook.inside.Load).Should(BeEquivalentTo(2), "the third took the freed slot")
		g.Eventually(hook.release).Should(BeSent(struct{}{}))
		g.Eventually(hook.release).Should(BeSent(struct{}{}))
		for _, c := range append(held, waiting) {
			g.Eventually(c).Should(Receive(HaveField("Status", http.StatusOK)))
		}
	})
}

// A client that sends its body slowly is cut off, and its slot freed.
func TestSlowBodyFreesItsSlot(t *testing.T) {
	g := NewWithT(t)
	url := serve(t, admissionlimit.New(admissionlimit.Options{MaxLargeInFlight: 1, ReadTimeout: 200 * time.Millisecond}), echoLength)
	conn, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = conn.Close() }()
	_, err = io.WriteString(conn, "POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(conn.SetReadDeadline(time.Now().Add(30 * time.Second))).To(Succeed())
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(resp.StatusCode).To(Equal(http.StatusRequestTimeout))

	g.Expect(post(t, url, []byte("{}"), true).Status).To(Equal(http.StatusOK), "the slot is free again")
}
