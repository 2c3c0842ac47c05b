package admissionlimit

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"strconv"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/webhook"
)

// DefaultMaxBodyBytes is the largest review a webhook reads: 4 MiB.
//
// A review carries the object and, on update, the stored one it replaces
// (oldObject), plus a few KiB of request (user, groups, options). etcd
// refuses a write over 1.5 MiB (its --max-request-bytes default) and the
// API server stores a Memcached as JSON, the encoding of the review, so a
// write that can succeed brings at most 2 x 1.5 MiB of objects: 4 MiB leaves
// a third on top of that. The API server's own limits stay far below it
// for any real Memcached: annotations total at most 256 KiB, managedFields
// list field names (not values) once per manager, and the spec is a few
// hundred bytes, so a real review is a few KiB. Only an object that could
// never be stored is refused here rather than by etcd.
const DefaultMaxBodyBytes = 4 << 20

// DefaultSmallBodyBytes separates the calls the API server makes for real
// Memcached objects, a few KiB each (an update carries two objects of a KiB
// or two, with their managedFields and kubectl's last-applied annotation),
// from large bodies: 64 KiB, room for tens of KiB of annotations more. A
// body that says it is at most this long is read and decoded in a lane of
// its own, so a flood of large bodies, whose decoding takes about a third of
// a CPU second each at the bound, delays real admission calls by little. A
// larger real review is still admitted, in the other lane.
const DefaultSmallBodyBytes = 64 << 10

// DefaultMaxInFlight is how many small calls are read and handled at once.
// Each is handled in about a millisecond, so eight admit thousands a second
// (the API server makes two per Memcached write), in a few MiB of memory.
const DefaultMaxInFlight = 8

// DefaultMaxLargeInFlight is how many large calls (or calls that do not say
// their length) are read and handled at once: one. The manager holds about
// four times a body while it decodes one, some 16 MiB at the bound: with
// the small lane's few MiB, that is what a flood can add to the live heap,
// well inside the manager's 256Mi limit. One at a time also leaves the
// other CPU of a small node to the calls that matter; no real Memcached
// review is large, so none waits here.
const DefaultMaxLargeInFlight = 1

// DefaultQueueWait is how long a call waits for a slot: a call that waits
// its turn is answered on the API server's first try, and one second still
// leaves time for its retries within the webhooks' five-second timeout.
const DefaultQueueWait = time.Second

// DefaultReadTimeout bounds the reading of a body once a slot is taken,
// so that a client sending slowly cannot hold a slot: the API server sends
// a review at once and gives up after timeoutSeconds (five).
const DefaultReadTimeout = 10 * time.Second

// retryAfterSeconds is the Retry-After of a 429: the API server's client
// retries after it, as long as the call's timeout allows.
const retryAfterSeconds = 1

// Options are the bounds; a zero field takes its default.
type Options struct {
	// MaxBodyBytes is the largest body read; a larger one is refused with
	// 413 (DefaultMaxBodyBytes).
	MaxBodyBytes int64
	// SmallBodyBytes is the largest Content-Length of a small call
	// (DefaultSmallBodyBytes).
	SmallBodyBytes int64
	// MaxInFlight is how many small calls are read and handled at once
	// (DefaultMaxInFlight).
	MaxInFlight int
	// MaxLargeInFlight is how many other calls are read and handled at
	// once (DefaultMaxLargeInFlight).
	MaxLargeInFlight int
	// QueueWait is how long a call waits for a slot before a 429
	// (DefaultQueueWait).
	QueueWait time.Duration
	// ReadTimeout bounds the reading of a body; a slower one is answered
	// 408 (DefaultReadTimeout).
	ReadTimeout time.Duration
}

func (o Options) withDefaults() Options {
	o.MaxBodyBytes = positiveOr(o.MaxBodyBytes, DefaultMaxBodyBytes)
	o.SmallBodyBytes = positiveOr(o.SmallBodyBytes, DefaultSmallBodyBytes)
	o.MaxInFlight = positiveOr(o.MaxInFlight, DefaultMaxInFlight)
	o.MaxLargeInFlight = positiveOr(o.MaxLargeInFlight, DefaultMaxLargeInFlight)
	o.QueueWait = positiveOr(o.QueueWait, DefaultQueueWait)
	o.ReadTimeout = positiveOr(o.ReadTimeout, DefaultReadTimeout)
	return o
}

// positiveOr is v, or def when v is not positive: a zero or negative bound
// would refuse every call.
func positiveOr[T int | int64 | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// Limiter holds the slots that every handler it wraps shares: one set for
// small calls, one for the others.
type Limiter struct {
	opts         Options
	small, large chan struct{}
}

// New returns a Limiter with o's bounds.
func New(o Options) *Limiter {
	o = o.withDefaults()
	return &Limiter{opts: o, small: make(chan struct{}, o.MaxInFlight), large: make(chan struct{}, o.MaxLargeInFlight)}
}

// lane is the set of slots for a call whose body says it is length bytes
// long (-1: it does not say). The server reads no more than a stated
// length, so a call cannot pass for small and send more.
func (l *Limiter) lane(length int64) chan struct{} {
	if length >= 0 && length <= l.opts.SmallBodyBytes {
		return l.small
	}
	return l.large
}

// Handler wraps next so that it sees only bodies within the size bound,
// read in full, and runs in one of the Limiter's slots.
func (l *Limiter) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// A body that says it is too large is refused unread; the server
		// then closes the connection rather than read the rest.
		if r.ContentLength > l.opts.MaxBodyBytes {
			tooLarge(w, l.opts.MaxBodyBytes)
			return
		}
		slots := l.lane(r.ContentLength)
		if !l.acquire(r.Context(), slots) {
			w.Header().Set("Retry-After", strconv.Itoa(retryAfterSeconds))
			http.Error(w, "too many admission calls at once", http.StatusTooManyRequests)
			return
		}
		defer func() { <-slots }()
		// An empty body is next's to refuse, in its own words.
		if r.Body != nil && r.Body != http.NoBody {
			body, err := l.read(w, r)
			switch {
			case errors.Is(err, errTooLarge):
				tooLarge(w, l.opts.MaxBodyBytes)
				return
			case errors.Is(err, os.ErrDeadlineExceeded):
				http.Error(w, "the body did not arrive in time", http.StatusRequestTimeout)
				return
			case err != nil:
				http.Error(w, "reading the body: "+err.Error(), http.StatusBadRequest)
				return
			}
			r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
		}
		next.ServeHTTP(w, r)
	})
}

// acquire takes one of slots, waiting up to QueueWait for one.
func (l *Limiter) acquire(ctx context.Context, slots chan struct{}) bool {
	select {
	case slots <- struct{}{}:
		return true
	default:
	}
	t := time.NewTimer(l.opts.QueueWait)
	defer t.Stop()
	select {
	case slots <- struct{}{}:
		return true
	case <-t.C:
		return false
	case <-ctx.Done():
		return false
	}
}

var errTooLarge = errors.New("request body too large")

// read reads r's body, at most MaxBodyBytes of it, within ReadTimeout. A
// body without a length (chunked) or one shorter than it says is bounded
// the same way, by what is read rather than what is claimed.
func (l *Limiter) read(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	rc := http.NewResponseController(w)
	// Not every ResponseWriter can (a test's recorder cannot); the bound
	// on size holds regardless.
	if rc.SetReadDeadline(time.Now().Add(l.opts.ReadTimeout)) == nil {
		defer func() { _ = rc.SetReadDeadline(time.Time{}) }()
	}
	var buf bytes.Buffer
	if r.ContentLength > 0 {
		// Room for ReadFrom's last read too, so that it never doubles.
		buf.Grow(int(r.ContentLength) + bytes.MinRead)
	}
	n, err := buf.ReadFrom(io.LimitReader(r.Body, l.opts.MaxBodyBytes+1))
	if err != nil {
		return nil, err
	}
	if n > l.opts.MaxBodyBytes {
		return nil, errTooLarge
	}
	return buf.Bytes(), nil
}

func tooLarge(w http.ResponseWriter, limit int64) {
	http.Error(w, "request body too large; limit is "+strconv.FormatInt(limit, 10)+" bytes", http.StatusRequestEntityTooLarge)
}

// WebhookServer is a webhook.Server whose webhooks answer through one
// Limiter.
type WebhookServer struct {
	webhook.Server
	limiter *Limiter
}

// NewWebhookServer wraps s so that every webhook registered on it shares
// the bounds of o.
func NewWebhookServer(s webhook.Server, o Options) WebhookServer {
	return WebhookServer{Server: s, limiter: New(o)}
}

// Register implements webhook.Server.
func (s WebhookServer) Register(path string, hook http.Handler) {
	s.Server.Register(path, s.limiter.Handler(hook))
}
