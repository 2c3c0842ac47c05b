package admissionprobe

import (
	"context"
	"fmt"
	"sync"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Options configure a probe.
type Options struct {
	// Client writes the objects; its dry-run creates go through admission.
	Client client.Client
	// Good and Bad make round i's objects: one admission must admit, one it
	// must refuse. Names must differ between rounds only if the objects
	// could exist; dry-run stores nothing.
	Good, Bad func(i int) client.Object
	// Refused tells whether an error is admission's verdict on the bad
	// object's content (for example the validating webhook's denial).
	Refused func(error) bool
	// Interval is the time between the starts of two rounds; 50ms when 0.
	Interval time.Duration
	// Timeout bounds each request; 15s when 0, beyond the webhooks' own.
	Timeout time.Duration
}

// Answer is one request and what came of it.
type Answer struct {
	At time.Time
	// Good is true for the object admission must admit.
	Good bool
	// Err is the API server's answer, nil when the object was admitted.
	Err error
	// Failed is true when the answer is not the one the content calls for.
	Failed bool
}

// Probe is a running probe.
type Probe struct {
	opts   Options
	cancel context.CancelFunc
	done   chan struct{}

	mu      sync.Mutex
	answers []Answer
}

// Start runs the probe until Stop.
func Start(ctx context.Context, opts Options) *Probe {
	if opts.Interval == 0 {
		opts.Interval = 50 * time.Millisecond
	}
	if opts.Timeout == 0 {
		opts.Timeout = 15 * time.Second
	}
	ctx, cancel := context.WithCancel(ctx)
	p := &Probe{opts: opts, cancel: cancel, done: make(chan struct{})}
	go p.run(ctx)
	return p
}

func (p *Probe) run(ctx context.Context) {
	defer close(p.done)
	tick := time.NewTicker(p.opts.Interval)
	defer tick.Stop()
	for i := 0; ; i++ {
		p.record(ctx, true, p.opts.Good(i))
		p.record(ctx, false, p.opts.Bad(i))
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

func (p *Probe) record(ctx context.Context, good bool, obj client.Object) {
	at := time.Now()
	reqCtx, cancel := context.WithTimeout(ctx, p.opts.Timeout)
	err := p.opts.Client.Create(reqCtx, obj, client.DryRunAll)
	cancel()
	if ctx.Err() != nil {
		return // stopped mid-request: no answer to judge
	}
	failed := err != nil
	if !good {
		failed = err == nil || !p.opts.Refused(err)
	}
	p.mu.Lock()
	p.answers = append(p.answers, Answer{At: at, Good: good, Err: err, Failed: failed})
	p.mu.Unlock()
}

// Stop ends the probe and returns what it saw.
func (p *Probe) Stop() Report {
	end := time.Now()
	p.cancel()
	<-p.done
	p.mu.Lock()
	defer p.mu.Unlock()
	return newReport(p.answers, end)
}

// Report sums a probe's answers up.
type Report struct {
	// Requests is the number of answers judged, Duration the time they span.
	Requests int
	Duration time.Duration
	// Failures are the answers that were not what the content called for.
	Failures []Answer
	// LongestWindow is the longest time from a failed request to the next
	// request that got the right answer (or to the end of the probe): how
	// long admission was broken, at the probe's resolution.
	LongestWindow time.Duration
}

func newReport(answers []Answer, end time.Time) Report {
	r := Report{Requests: len(answers)}
	if len(answers) > 0 {
		r.Duration = end.Sub(answers[0].At)
	}
	var windowStart time.Time
	for _, a := range answers {
		switch {
		case a.Failed:
			r.Failures = append(r.Failures, a)
			if windowStart.IsZero() {
				windowStart = a.At
			}
		case !windowStart.IsZero():
			r.LongestWindow = max(r.LongestWindow, a.At.Sub(windowStart))
			windowStart = time.Time{}
		}
	}
	if !windowStart.IsZero() {
		r.LongestWindow = max(r.LongestWindow, end.Sub(windowStart))
	}
	return r
}

// String is the report in one line, with the first failures' errors.
func (r Report) String() string {
	s := fmt.Sprintf("%d requests over %s, %d failed, longest window %s",
		r.Requests, r.Duration.Round(time.Millisecond), len(r.Failures), r.LongestWindow.Round(time.Millisecond))
	for i, f := range r.Failures {
		if i == 5 {
			s += fmt.Sprintf("; and %d more", len(r.Failures)-i)
			break
		}
		kind := "good object refused"
		if !f.Good {
			kind = "bad object"
		}
		s += fmt.Sprintf("; %s at %s: %v", kind, f.At.Format("15:04:05.000"), f.Err)
	}
	return s
}
