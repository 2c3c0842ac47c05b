package webhooks_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"

	"github.com/example-inc/memcached-operator/api/v1/gen"
	"github.com/example-inc/memcached-operator/webhooks"
)

// BenchmarkAdmission is the handlers' own cost per call, as the webhook
// server runs them: decode the AdmissionReview, admit, encode the answer.
// kube-apiserver adds TLS and the network on top (see test/bench).
func BenchmarkAdmission(b *testing.B) {
	h := newWebhookHandler(b, webhooks.DefaultSizePolicy())
	cases := []struct {
		name, path string
		body       []byte
		// What the answer must be, checked before timing, so that a
		// benchmark cannot time an error path by mistake.
		allowed, patched bool
	}{
		{"mutate/size-set", mutatePath, review(admissionv1.Create, object(gen.Memcached("default", "cache", gen.WithSize(3)))), true, true},
		{"mutate/size-omitted", mutatePath, review(admissionv1.Create, object(gen.Memcached("default", "cache"))), true, true},
		{"validate/create", validatePath, review(admissionv1.Create, object(gen.Memcached("default", "cache", gen.WithSize(3)))), true, false},
		{"validate/create-refused", validatePath, review(admissionv1.Create, object(gen.Memcached("default", "cache", gen.WithSize(40)))), false, false},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			resp := post(b, h, c.path, c.body, "application/json")
			if resp.Allowed != c.allowed || (len(resp.Patch) > 0) != c.patched {
				b.Fatalf("allowed %v with a %d-byte patch (%v), want allowed %v, patched %v", resp.Allowed, len(resp.Patch), resp.Result, c.allowed, c.patched)
			}
			b.ReportAllocs()
			for b.Loop() {
				r := httptest.NewRequest(http.MethodPost, c.path, bytes.NewReader(c.body))
				r.Header.Set("Content-Type", "application/json")
				w := httptest.NewRecorder()
				h.ServeHTTP(w, r)
				if w.Code != http.StatusOK {
					b.Fatalf("HTTP %d: %s", w.Code, w.Body)
				}
			}
		})
	}
}
