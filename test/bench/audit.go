package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// Why the operator's requests are counted from an audit log: see doc.go,
// "Counting the operator's requests".
const (
	// operatorUser is the operator's user name (its certificate's CN).
	operatorUser = "memcached-operator-bench"
	// markerNamespace is where the bench makes marker requests: a GET of a
	// ConfigMap that does not exist, audited so that the bench knows the
	// log has been written up to that moment.
	markerNamespace = "bench-audit-marker"
)

// auditPolicy logs the operator's requests and the bench's markers, and
// nothing else, so the log stays small even with ten thousand pods.
func auditPolicy() string {
	return fmt.Sprintf(`apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Metadata
  users: [%q]
- level: Metadata
  namespaces: [%q]
  resources:
  - group: ""
    resources: ["configmaps"]
- level: None
`, operatorUser, markerNamespace)
}

// auditRecord is what the bench keeps of an audit event.
type auditRecord struct {
	at       time.Time
	user     string
	verb     string
	resource string // "deployments", "memcacheds/status", "leases", ...
	code     int
	uri      string
}

// auditEvent is the part of an audit.k8s.io/v1 Event the bench reads.
type auditEvent struct {
	Stage                    string    `json:"stage"`
	RequestURI               string    `json:"requestURI"`
	Verb                     string    `json:"verb"`
	RequestReceivedTimestamp time.Time `json:"requestReceivedTimestamp"`
	User                     struct {
		Username string `json:"username"`
	} `json:"user"`
	ObjectRef *struct {
		Resource    string `json:"resource"`
		Subresource string `json:"subresource"`
	} `json:"objectRef"`
	ResponseStatus *struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
}

// auditLog reads the API server's audit log as it grows.
type auditLog struct {
	path    string
	offset  int64
	partial []byte
	records []auditRecord
	markers atomic.Int64
}

func newAuditLog(path string) *auditLog { return &auditLog{path: path} }

// read parses what was appended since the last read. A line still being
// written is kept for the next read.
func (a *auditLog) read() error {
	f, err := os.Open(a.path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	if _, err := f.Seek(a.offset, io.SeekStart); err != nil {
		return err
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return err
	}
	a.offset += int64(len(data))
	data = append(a.partial, data...)
	end := bytes.LastIndexByte(data, '\n')
	if end < 0 {
		a.partial = data
		return nil
	}
	a.partial = slices.Clone(data[end+1:])
	for line := range bytes.SplitSeq(data[:end], []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		r, ok, err := parseAuditLine(line)
		if err != nil {
			return err
		}
		if ok {
			a.records = append(a.records, r)
		}
	}
	return nil
}

// parseAuditLine keeps one event per request: ResponseStarted for a watch,
// which is logged when it starts (it may last ten minutes, long after the
// window it started in was counted), ResponseComplete or Panic for the
// rest.
func parseAuditLine(line []byte) (auditRecord, bool, error) {
	var ev auditEvent
	if err := json.Unmarshal(line, &ev); err != nil {
		return auditRecord{}, false, fmt.Errorf("audit log: %w", err)
	}
	switch {
	case ev.Verb == "watch" && ev.Stage == "ResponseStarted":
	case ev.Verb != "watch" && (ev.Stage == "ResponseComplete" || ev.Stage == "Panic"):
	default:
		return auditRecord{}, false, nil
	}
	r := auditRecord{
		at:   ev.RequestReceivedTimestamp,
		user: ev.User.Username,
		verb: ev.Verb,
		uri:  ev.RequestURI,
	}
	if ev.ObjectRef != nil {
		r.resource = ev.ObjectRef.Resource
		if ev.ObjectRef.Subresource != "" {
			r.resource += "/" + ev.ObjectRef.Subresource
		}
	}
	if r.resource == "" {
		// Discovery and other non-resource requests.
		r.resource = ev.RequestURI
		if i := strings.IndexByte(r.resource, '?'); i >= 0 {
			r.resource = r.resource[:i]
		}
	}
	if ev.ResponseStatus != nil {
		r.code = ev.ResponseStatus.Code
	}
	return r, true, nil
}

// sync returns once every request that completed before it was called is in
// the log: it makes a marker request with get and reads the log until the
// marker shows up.
func (a *auditLog) sync(ctx context.Context, get func(ctx context.Context, namespace, name string) error) error {
	name := fmt.Sprintf("marker-%d-%d", os.Getpid(), a.markers.Add(1))
	if err := get(ctx, markerNamespace, name); err != nil {
		return fmt.Errorf("audit marker: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(context.Context) (bool, error) {
		if err := a.read(); err != nil {
			return false, err
		}
		for _, r := range slices.Backward(a.records) {
			if strings.Contains(r.uri, "/configmaps/"+name) {
				return true, nil
			}
		}
		return false, nil
	})
}

// requests counts the operator's requests that arrived in [from, to).
func (a *auditLog) requests(from, to time.Time) requestCounts {
	c := requestCounts{}
	for _, r := range a.records {
		if r.user != operatorUser || r.at.Before(from) || !r.at.Before(to) {
			continue
		}
		c[r.verb+" "+r.resource]++
		if r.code >= 400 {
			c[failedKey(r)]++
		}
	}
	return c
}

func failedKey(r auditRecord) string {
	return fmt.Sprintf("failed %s %s %d", r.verb, r.resource, r.code)
}

// requestCounts counts requests by "verb resource[/subresource]", e.g.
// "patch memcacheds/status", plus "failed verb resource code" for the
// requests the API server refused (also counted under their verb).
type requestCounts map[string]int

// writeVerbs are the verbs that change state. Server-side apply is a patch.
func writeVerbs() []string {
	return []string{"create", "update", "patch", "delete", "deletecollection"}
}

// writes returns the write requests, optionally without some resources.
func (c requestCounts) writes(exceptResources ...string) requestCounts {
	return c.filter(func(verb, res string) bool {
		return slices.Contains(writeVerbs(), verb) && !slices.Contains(exceptResources, res)
	})
}

// only returns the requests on the given resources.
func (c requestCounts) only(resources ...string) requestCounts {
	return c.filter(func(_, res string) bool { return slices.Contains(resources, res) })
}

// filter keeps the counts whose "verb resource" key keep accepts.
func (c requestCounts) filter(keep func(verb, res string) bool) requestCounts {
	out := requestCounts{}
	for k, v := range c {
		if verb, res, _ := strings.Cut(k, " "); keep(verb, res) {
			out[k] = v
		}
	}
	return out
}

// total sums the counts, leaving out the "failed ..." entries, which are
// already counted under their verb.
func (c requestCounts) total() int {
	n := 0
	for k, v := range c {
		if !strings.HasPrefix(k, "failed ") {
			n += v
		}
	}
	return n
}

func (c requestCounts) String() string {
	keys := slices.Sorted(maps.Keys(c))
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s=%d", k, c[k]))
	}
	return strings.Join(parts, ", ")
}
