package webhooks_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"

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
	}{
		{"mutate/size-set", mutatePath, review(admissionv1.Create, object(memcached("cache", size(3))))},
		{"mutate/size-omitted", mutatePath, review(admissionv1.Create, object(memcached("cache")))},
		{"validate/create", validatePath, review(admissionv1.Create, object(memcached("cache", size(3))))},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
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
