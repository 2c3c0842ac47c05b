package memcachedtls_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/example-inc/memcached-operator/certs/memcachedtls"
)

// ReadServed takes only a well-formed answer of bounded size: the port of a
// pod may answer anything.
func TestReadServedRefusesWhatIsNotAnAnswer(t *testing.T) {
	tests := []struct {
		name   string
		status int
		body   string
		want   string
	}{
		{"an error", http.StatusServiceUnavailable, "not yet\n", "503 Service Unavailable: not yet"},
		{"not JSON", http.StatusOK, "<html>", "invalid character"},
		{"no validity", http.StatusOK, `{"serialNumber":"1f"}`, "no validity period"},
		{"too large", http.StatusOK, `{"serialNumber":"` + strings.Repeat("f", 8<<10) + `"}`, "an answer over 4096 bytes"},
		{"too large an error", http.StatusBadGateway, strings.Repeat("x", 1<<20), "an answer over 4096 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				g.Expect(r.URL.Path).To(Equal(memcachedtls.ServedPath))
				w.WriteHeader(tt.status)
				_, _ = w.Write([]byte(tt.body))
			}))
			defer srv.Close()
			_, err := memcachedtls.ReadServed(t.Context(), srv.Client(), strings.TrimPrefix(srv.URL, "http://"))
			g.Expect(err).To(MatchError(ContainSubstring(tt.want)))
		})
	}
	t.Run("an answer", func(t *testing.T) {
		g := NewWithT(t)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			_, _ = w.Write([]byte(`{"serialNumber":"1f","notBefore":"2026-12-01T00:00:00Z","notAfter":"2027-03-01T00:00:00Z"}`))
		}))
		defer srv.Close()
		g.Expect(memcachedtls.ReadServed(t.Context(), srv.Client(), strings.TrimPrefix(srv.URL, "http://"))).To(Equal(memcachedtls.Served{
			SerialNumber: "1f", NotBefore: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), NotAfter: time.Date(2027, 3, 1, 0, 0, 0, 0, time.UTC)}))
	})
}
