package app

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Go's transport asks for gzip unless told not to, and the API server then
// gzips every list and watch event: the manager's client must not ask.
func TestAPIClientAsksForNoCompression(t *testing.T) {
	var mu sync.Mutex
	var asked []string
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		asked = append(asked, r.Header.Get("Accept-Encoding"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"kind":"PodList","apiVersion":"v1","items":[]}`))
	}))
	defer srv.Close()
	g := NewWithT(t)
	o, err := parseOptions(nil)
	g.Expect(err).NotTo(HaveOccurred())
	cs, err := kubernetes.NewForConfig(apiClientConfig(o, &rest.Config{Host: srv.URL, TLSClientConfig: rest.TLSClientConfig{Insecure: true}}))
	g.Expect(err).NotTo(HaveOccurred())
	_, err = cs.CoreV1().Pods("ns").List(context.Background(), metav1.ListOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(asked, []string{""}) {
		t.Errorf("Accept-Encoding of the manager's requests: %q, want none", asked)
	}
}
