package controllers_test

import (
	"maps"
	"net/http"
	"strings"
	"sync"
	"testing"

	"k8s.io/client-go/rest"
)

// requestCounter counts the requests a client makes to the API server by
// "VERB resource[/subresource]" (e.g. "PATCH memcacheds/status"), so that
// specs can assert how many writes the reconciler costs the control plane,
// and by "VERB path", so that they can assert it of one object. Requests
// that ask for the answer as metadata only are also counted apart.
type requestCounter struct {
	mu           sync.Mutex
	counts       map[string]int
	paths        map[string]int
	metadataOnly map[string]int
}

// countRequests makes every client built from cfg count its requests in
// the returned counter.
func countRequests(cfg *rest.Config) (*rest.Config, *requestCounter) {
	c := &requestCounter{counts: map[string]int{}, paths: map[string]int{}, metadataOnly: map[string]int{}}
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return countingRoundTripper{next: rt, counter: c}
	})
	return cfg, c
}

// Writes returns the counts of requests that change state: POST, PUT, PATCH
// and DELETE.
func (c *requestCounter) Writes() map[string]int {
	return c.writesIn(c.counts)
}

// MetadataOnlyWrites returns the counts of writes whose answer was asked
// for as metadata only (PartialObjectMetadata).
func (c *requestCounter) MetadataOnlyWrites() map[string]int {
	return c.writesIn(c.metadataOnly)
}

func (c *requestCounter) writesIn(m map[string]int) map[string]int {
	c.mu.Lock()
	counts := maps.Clone(m)
	c.mu.Unlock()
	out := map[string]int{}
	for k, n := range counts {
		verb, _, _ := strings.Cut(k, " ")
		switch verb {
		case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
			out[k] = n
		}
	}
	return out
}

// watchVerb is the key's verb for a watch, a GET with watch=true, as the
// API server's audit log names it.
const watchVerb = "WATCH"

// Watched returns the resources the client opened a watch on.
func (c *requestCounter) Watched() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for k := range c.counts {
		if verb, resource, _ := strings.Cut(k, " "); verb == watchVerb {
			out = append(out, resource)
		}
	}
	return out
}

// To returns how many requests of method were made to path, such as
// /apis/cache.example.com/v1/namespaces/ns/memcacheds/m/status.
func (c *requestCounter) To(method, path string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.paths[method+" "+path]
}

type countingRoundTripper struct {
	next    http.RoundTripper
	counter *requestCounter
}

func (rt countingRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	method := req.Method
	if req.URL.Query().Get("watch") == "true" {
		method = watchVerb
	}
	key := method + " " + apiResource(req.URL.Path)
	rt.counter.mu.Lock()
	rt.counter.counts[key]++
	rt.counter.paths[req.Method+" "+req.URL.Path]++
	if strings.Contains(req.Header.Get("Accept"), "as=PartialObjectMetadata") {
		rt.counter.metadataOnly[key]++
	}
	rt.counter.mu.Unlock()
	return rt.next.RoundTrip(req)
}

// apiResource extracts "resource" or "resource/subresource" from an API
// path such as /apis/apps/v1/namespaces/ns/deployments/name/scale; paths
// outside the resource API (discovery, /healthz) are returned as they are.
func apiResource(path string) string {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	var tail []string
	switch {
	case len(parts) >= 2 && parts[0] == "api":
		tail = parts[2:] // api/v1/...
	case len(parts) >= 3 && parts[0] == "apis":
		tail = parts[3:] // apis/group/version/...
	default:
		return path
	}
	if len(tail) > 2 && tail[0] == "namespaces" {
		tail = tail[2:] // a namespaced resource, not the namespaces resource itself
	}
	switch len(tail) {
	case 0:
		return path
	case 1, 2:
		return tail[0]
	default:
		return tail[0] + "/" + tail[2]
	}
}

func TestAPIResource(t *testing.T) {
	tests := map[string]string{
		"/apis/apps/v1/namespaces/ns/deployments":                         "deployments",
		"/apis/apps/v1/namespaces/ns/deployments/x":                       "deployments",
		"/apis/apps/v1/namespaces/ns/deployments/x/scale":                 "deployments/scale",
		"/apis/cache.example.com/v1/namespaces/ns/memcacheds/m/status":    "memcacheds/status",
		"/api/v1/namespaces/ns/pods":                                      "pods",
		"/api/v1/namespaces/ns":                                           "namespaces",
		"/api/v1/namespaces":                                              "namespaces",
		"/apis/events.k8s.io/v1/namespaces/ns/events":                     "events",
		"/apis/coordination.k8s.io/v1/namespaces/ns/leases/operator-lock": "leases",
		"/api/v1/nodes/n1/status":                                         "nodes/status",
		"/healthz":                                                        "/healthz",
		"/apis":                                                           "/apis",
	}
	for path, want := range tests {
		if got := apiResource(path); got != want {
			t.Errorf("apiResource(%q) = %q, want %q", path, got, want)
		}
	}
}
