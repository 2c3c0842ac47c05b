package apicount

import (
	"maps"
	"net/http"
	"strings"
	"sync"

	"k8s.io/client-go/rest"
)

// Counter counts requests by "VERB resource[/subresource]", e.g.
// "PATCH deployments" or "PATCH memcacheds/status". It is safe for
// concurrent use.
type Counter struct {
	mu     sync.Mutex
	counts map[string]int
}

// New returns an empty Counter.
func New() *Counter {
	return &Counter{counts: map[string]int{}}
}

// Wrap makes every client built from cfg count its requests in c, and
// returns cfg.
func (c *Counter) Wrap(cfg *rest.Config) *rest.Config {
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripper{next: rt, counter: c}
	})
	return cfg
}

// All returns a copy of every count so far.
func (c *Counter) All() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.counts)
}

// Writes returns the counts of requests that change state: POST, PUT, PATCH
// and DELETE.
func (c *Counter) Writes() map[string]int {
	out := map[string]int{}
	for k, n := range c.All() {
		verb, _, _ := strings.Cut(k, " ")
		switch verb {
		case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
			out[k] = n
		}
	}
	return out
}

// TotalWrites is the sum of Writes.
func (c *Counter) TotalWrites() int {
	total := 0
	for _, n := range c.Writes() {
		total += n
	}
	return total
}

func (c *Counter) add(key string) {
	c.mu.Lock()
	c.counts[key]++
	c.mu.Unlock()
}

type roundTripper struct {
	next    http.RoundTripper
	counter *Counter
}

func (rt roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	rt.counter.add(req.Method + " " + Resource(req.URL.Path))
	return rt.next.RoundTrip(req)
}

// Resource extracts "resource" or "resource/subresource" from an API path
// such as /apis/apps/v1/namespaces/ns/deployments/name/scale; paths outside
// the resource API (discovery, /healthz) are returned as they are.
func Resource(path string) string {
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
