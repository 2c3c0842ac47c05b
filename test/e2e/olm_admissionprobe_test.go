package e2e

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The probe writes through the API server's admission chain without pause
// and records every answer, to measure how long admission fails while the
// upgrade replaces the webhook server underneath it.
//
// Each round makes two dry-run creates: one the webhooks must admit and one
// they must refuse. Dry-run requests run every admission webhook (the
// operator's declare no side effects) and store nothing, so the probe
// creates no pods however long it runs. An answer counts as a failure when
// it is not the one the object's content calls for: the good object refused
// for any reason, or the bad one admitted (admission failing open) or
// refused by anything but the webhook's own verdict (a call that never
// reached a webhook, timed out, or met no endpoint).
const (
	// probeInterval is the time between the starts of two rounds.
	probeInterval = 50 * time.Millisecond
	// probeTimeout bounds each request, beyond the webhooks' own timeout.
	probeTimeout = 15 * time.Second
)

// probeOptions configure a probe.
type probeOptions struct {
	// Client writes the objects; its dry-run creates go through admission.
	Client client.Client
	// Good and Bad make round i's objects: one admission must admit, one it
	// must refuse. Names must differ between rounds only if the objects
	// could exist; dry-run stores nothing.
	Good, Bad func(i int) client.Object
	// Refused tells whether an error is admission's verdict on the bad
	// object's content (for example the validating webhook's denial).
	Refused func(error) bool
}

// probeAnswer is one request and what came of it.
type probeAnswer struct {
	At time.Time
	// Good is true for the object admission must admit.
	Good bool
	// Err is the API server's answer, nil when the object was admitted.
	Err error
	// Failed is true when the answer is not the one the content calls for.
	Failed bool
}

// admissionProbe is a running probe.
type admissionProbe struct {
	opts   probeOptions
	cancel context.CancelFunc
	done   chan struct{}

	mu      sync.Mutex
	answers []probeAnswer
}

// startAdmissionProbe runs a probe until its Stop.
func startAdmissionProbe(ctx context.Context, opts probeOptions) *admissionProbe {
	ctx, cancel := context.WithCancel(ctx)
	p := &admissionProbe{opts: opts, cancel: cancel, done: make(chan struct{})}
	go p.run(ctx)
	return p
}

func (p *admissionProbe) run(ctx context.Context) {
	defer close(p.done)
	tick := time.NewTicker(probeInterval)
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

func (p *admissionProbe) record(ctx context.Context, good bool, obj client.Object) {
	at := time.Now()
	reqCtx, cancel := context.WithTimeout(ctx, probeTimeout)
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
	p.answers = append(p.answers, probeAnswer{At: at, Good: good, Err: err, Failed: failed})
	p.mu.Unlock()
}

// Stop ends the probe and returns what it saw.
func (p *admissionProbe) Stop() probeReport {
	end := time.Now()
	p.cancel()
	<-p.done
	p.mu.Lock()
	defer p.mu.Unlock()
	return newProbeReport(p.answers, end)
}

// probeReport sums a probe's answers up.
type probeReport struct {
	// Requests is the number of answers judged, Duration the time they span.
	Requests int
	Duration time.Duration
	// Failures are the answers that were not what the content called for.
	Failures []probeAnswer
	// LongestWindow is the longest time from a failed request to the next
	// request that got the right answer (or to the end of the probe): how
	// long admission was broken, at the probe's resolution.
	LongestWindow time.Duration
}

func newProbeReport(answers []probeAnswer, end time.Time) probeReport {
	r := probeReport{Requests: len(answers)}
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
func (r probeReport) String() string {
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

// TestProbeReportWindows runs without the suite's cluster:
// go -C test test ./e2e -run TestProbeReportWindows.
func TestProbeReportWindows(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	ok := func(ms int) probeAnswer { return probeAnswer{At: at(ms), Good: true} }
	fail := func(ms int) probeAnswer {
		return probeAnswer{At: at(ms), Good: true, Err: errors.New("no endpoints"), Failed: true}
	}
	for _, tc := range []struct {
		name     string
		answers  []probeAnswer
		end      int
		failures int
		window   time.Duration
	}{
		{name: "nothing", end: 100},
		{name: "all right", answers: []probeAnswer{ok(0), ok(50), ok(100)}, end: 150},
		{name: "one failure", answers: []probeAnswer{ok(0), fail(50), ok(100)}, end: 150, failures: 1, window: 50 * time.Millisecond},
		{name: "the longest of two windows", answers: []probeAnswer{fail(0), ok(50), fail(100), fail(150), fail(200), ok(400)},
			end: 500, failures: 4, window: 300 * time.Millisecond},
		{name: "failing at the end lasts until the end", answers: []probeAnswer{ok(0), fail(100)}, end: 1000, failures: 1,
			window: 900 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newProbeReport(tc.answers, at(tc.end))
			if r.Requests != len(tc.answers) || len(r.Failures) != tc.failures || r.LongestWindow != tc.window {
				t.Errorf("report %s; want %d requests, %d failed, longest window %s", r, len(tc.answers), tc.failures, tc.window)
			}
		})
	}
}
