package e2e

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionv1 "k8s.io/api/admission/v1"

	"github.com/example-inc/memcached-operator/certs"
	"github.com/example-inc/memcached-operator/hack/local-cluster/process"
	"github.com/example-inc/memcached-operator/webhooks"
)

// The webhook server's paths (config/webhook/manifests.yaml).
var webhookPaths = []string{
	"/mutate-cache-example-com-v1-memcached",
	"/validate-cache-example-com-v1-memcached",
	webhooks.ScaleValidatePath,
}

// reviewPrefix opens an AdmissionReview for a Memcached create, up to the
// object's annotations, so a body can be cut or padded anywhere after it.
const reviewPrefix = `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"7f0b","kind":{"group":"cache.example.com","version":"v1","kind":"Memcached"},"resource":{"group":"cache.example.com","version":"v1","resource":"memcacheds"},"operation":"CREATE","userInfo":{"username":"fault-test"},"object":{"apiVersion":"cache.example.com/v1","kind":"Memcached","metadata":{"name":"x","annotations":{"pad":"`

// reviewSuffix closes reviewPrefix into a well-formed review of size 2.
const reviewSuffix = `"}},"spec":{"size":2}}}}`

// bigBody is a 10 MiB AdmissionReview: well-formed, but larger than the
// webhook server reads (admissionlimit.DefaultMaxBodyBytes).
func bigBody() []byte {
	return []byte(reviewPrefix + strings.Repeat("a", 10<<20) + reviewSuffix)
}

var _ = Describe("malformed AdmissionReview bodies posted straight to the webhook server", Ordered, Label(labelHost, labelFaults), func() {
	const ns = "webhook-input"
	var (
		op     *operator
		poster *http.Client
		// startRSS is the operator's VmRSS once ready, before any post.
		startRSS int64
	)

	BeforeAll(func(ctx SpecContext) {
		cluster.namespace(ctx, ns, nil)
		op = startOperator(ctx, "webhook-input", operatorConfig{Namespace: ns, Webhooks: true})
		poster = newPoster()
		var err error
		startRSS, err = op.rssKiB()
		Expect(err).NotTo(HaveOccurred())
	}, NodeTimeout(3*time.Minute))

	post := func(ctx context.Context, path, contentType string, body []byte) (answer, error) {
		return postReview(ctx, poster, certs.LocalWebhookURL(op.Ports().Webhook)+path, contentType, body)
	}

	It("admits a well-formed review, so the refusals below are the bodies' doing", func(ctx SpecContext) {
		for _, path := range webhookPaths[:2] {
			a, err := post(ctx, path, "application/json", []byte(reviewPrefix+reviewSuffix))
			Expect(err).NotTo(HaveOccurred())
			Expect(a.status).To(Equal(http.StatusOK))
			Expect(a.allowed).To(BeTrue(), "%s: %s", path, a)
		}
	})

	DescribeTable("are refused with a 4xx, on every webhook path",
		func(ctx SpecContext, contentType string, body []byte, wantCode int32) {
			for _, path := range webhookPaths {
				a, err := post(ctx, path, contentType, body)
				Expect(err).NotTo(HaveOccurred(), path)
				Expect(a.code()).To(Equal(wantCode), "%s: %s", path, a)
				Expect(a.allowed).To(BeFalse(), "%s: %s", path, a)
				AddReportEntry(fmt.Sprintf("%s %s", CurrentSpecReport().LeafNodeText, path), a.String())
			}
			Expect(op.Running()).To(BeTrue())
		},
		Entry("an empty body", "application/json", []byte{}, int32(http.StatusBadRequest)),
		Entry("truncated JSON", "application/json", []byte(reviewPrefix[:len(reviewPrefix)/2]), int32(http.StatusBadRequest)),
		Entry("not JSON at all", "application/json", []byte("\x00\xff\x13memcached"), int32(http.StatusBadRequest)),
		Entry("a ConfigMap instead of an AdmissionReview", "application/json",
			[]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"},"data":{"a":"b"}}`), int32(http.StatusBadRequest)),
		Entry("an AdmissionReview without a request", "application/json",
			[]byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}`), int32(http.StatusBadRequest)),
		Entry("a Pod under the Memcached kind", "application/json",
			[]byte(strings.Replace(reviewPrefix, `"kind":"Memcached"}`, `"kind":"Pod"}`, 1)+reviewSuffix), int32(http.StatusBadRequest)),
		Entry("a text/plain content type", "text/plain", []byte(reviewPrefix+reviewSuffix), int32(http.StatusBadRequest)),
		Entry("a 10 MiB body", "application/json", bigBody(), int32(http.StatusRequestEntityTooLarge)),
	)

	It("keeps its memory bounded over ten 10 MiB bodies and stays ready", func(ctx SpecContext) {
		before, err := op.rssKiB()
		Expect(err).NotTo(HaveOccurred())
		peak := before
		body := bigBody()
		for range 10 {
			a, err := post(ctx, webhookPaths[1], "application/json", body)
			Expect(err).NotTo(HaveOccurred())
			Expect(a.code()).To(BeEquivalentTo(http.StatusRequestEntityTooLarge))
			rss, err := op.rssKiB()
			Expect(err).NotTo(HaveOccurred())
			peak = max(peak, rss)
		}
		after, err := op.rssKiB()
		Expect(err).NotTo(HaveOccurred())
		AddReportEntry("webhook server VmRSS over ten 10 MiB posts", fmt.Sprintf(
			"when ready %d KiB; before the ten %d KiB, peak %d KiB, after %d KiB (growth %d KiB, %d KiB since ready)",
			startRSS, before, peak, after, after-before, after-startRSS))
		Expect(after-before).To(BeNumerically("<", 64<<10), "VmRSS grew by more than 64 MiB over the ten posts")
		Expect(after-startRSS).To(BeNumerically("<", 64<<10), "VmRSS grew by more than 64 MiB since the operator was ready")

		Expect(op.Running()).To(BeTrue(), op.Tail(30))
		Expect(process.Get(ctx, op.ProbeURL()+"/readyz")).To(Equal("ok"))
	}, NodeTimeout(3*time.Minute))
})

// newPoster is a client of the webhook server that trusts the local CA, as
// the API server does through the configurations' caBundle: the bodies
// reach the handlers, not a TLS error.
func newPoster() *http.Client {
	caPEM, err := os.ReadFile(filepath.Join(localWebhookCertDir(), certs.CAFile))
	Expect(err).NotTo(HaveOccurred())
	roots := x509.NewCertPool()
	Expect(roots.AppendCertsFromPEM(caPEM)).To(BeTrue())
	return &http.Client{Timeout: time.Minute, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12},
	}}
}

// answer is what the webhook server replied: the HTTP status and, when the
// body is an AdmissionReview, its response. controller-runtime answers a bad
// request with HTTP 200 and the 4xx in the review's result, which is what
// the API server reads.
type answer struct {
	status  int
	allowed bool
	result  int32
	message string
}

// code is the answer's 4xx or 5xx: the HTTP status when it is not 200,
// otherwise the review's result code.
func (a answer) code() int32 {
	if a.status != http.StatusOK {
		return int32(a.status)
	}
	return a.result
}

func (a answer) String() string {
	return fmt.Sprintf("HTTP %d, allowed=%t, result %d: %s", a.status, a.allowed, a.result, a.message)
}

func postReview(ctx context.Context, c *http.Client, url, contentType string, body []byte) (answer, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return answer{}, err
	}
	req.Header.Set("Content-Type", contentType)
	resp, err := c.Do(req)
	if err != nil {
		return answer{}, err
	}
	defer func() { _ = resp.Body.Close() }()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return answer{}, err
	}
	a := answer{status: resp.StatusCode, message: string(raw)}
	review := admissionv1.AdmissionReview{}
	if json.Unmarshal(raw, &review) == nil && review.Response != nil {
		a.allowed = review.Response.Allowed
		if r := review.Response.Result; r != nil {
			a.result, a.message = r.Code, r.Message
		}
	}
	return a, nil
}
