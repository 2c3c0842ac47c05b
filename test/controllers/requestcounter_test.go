package controllers_test

import (
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/client-go/rest"
)

// requestCounter counts the requests a client makes to the API server: its
// writes by "VERB resource[/subresource]" (e.g. "PATCH memcacheds/status"),
// so that specs can assert how many writes the reconciler costs the control
// plane, apart those whose answer it asks for as metadata only; every
// request by "VERB path", so that they can assert it of one object; and the
// resources it watches.
type requestCounter struct {
	mu                          sync.Mutex
	writes, metadataOnly, paths map[string]int
	watched                     map[string]bool
}

// requestInfo reads a request's verb and resource as the API server does.
var requestInfo = request.RequestInfoFactory{
	APIPrefixes: map[string]sets.Empty{"api": {}, "apis": {}}, GrouplessAPIPrefixes: map[string]sets.Empty{"api": {}},
}

// countRequests makes every client built from cfg count its requests in
// the returned counter.
func countRequests(cfg *rest.Config) (*rest.Config, *requestCounter) {
	c := &requestCounter{writes: map[string]int{}, metadataOnly: map[string]int{}, paths: map[string]int{}, watched: map[string]bool{}}
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return countingRoundTripper{next: rt, counter: c}
	})
	return cfg, c
}

// Writes returns the counts of requests that change state: POST, PUT, PATCH
// and DELETE.
func (c *requestCounter) Writes() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.writes)
}

// MetadataOnlyWrites returns the counts of writes whose answer was asked
// for as metadata only (PartialObjectMetadata).
func (c *requestCounter) MetadataOnlyWrites() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.metadataOnly)
}

// Watched returns the resources the client opened a watch on.
func (c *requestCounter) Watched() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Collect(maps.Keys(c.watched))
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
	info, err := requestInfo.NewRequestInfo(req)
	if err != nil {
		return nil, err
	}
	// Outside the resource API (discovery, /healthz) the path stands for the
	// resource.
	resource := req.URL.Path
	if info.IsResourceRequest {
		resource = strings.TrimSuffix(info.Resource+"/"+info.Subresource, "/")
	}
	c := rt.counter
	c.mu.Lock()
	c.paths[req.Method+" "+req.URL.Path]++
	switch req.Method {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
		c.writes[req.Method+" "+resource]++
		if strings.Contains(req.Header.Get("Accept"), "as=PartialObjectMetadata") {
			c.metadataOnly[req.Method+" "+resource]++
		}
	}
	if info.Verb == "watch" {
		c.watched[resource] = true
	}
	c.mu.Unlock()
	return rt.next.RoundTrip(req)
}
