package admissionprobe

import (
	"errors"
	"testing"
	"time"
)

func TestReportWindows(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	ok := func(ms int) Answer { return Answer{At: at(ms), Good: true} }
	fail := func(ms int) Answer {
		return Answer{At: at(ms), Good: true, Err: errors.New("no endpoints"), Failed: true}
	}
	for _, tc := range []struct {
		name     string
		answers  []Answer
		end      int
		failures int
		window   time.Duration
	}{
		{name: "nothing", end: 100},
		{name: "all right", answers: []Answer{ok(0), ok(50), ok(100)}, end: 150},
		{name: "one failure", answers: []Answer{ok(0), fail(50), ok(100)}, end: 150, failures: 1, window: 50 * time.Millisecond},
		{name: "the longest of two windows", answers: []Answer{fail(0), ok(50), fail(100), fail(150), fail(200), ok(400)},
			end: 500, failures: 4, window: 300 * time.Millisecond},
		{name: "failing at the end lasts until the end", answers: []Answer{ok(0), fail(100)}, end: 1000, failures: 1,
			window: 900 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newReport(tc.answers, at(tc.end))
			if r.Requests != len(tc.answers) || len(r.Failures) != tc.failures || r.LongestWindow != tc.window {
				t.Errorf("report %s; want %d requests, %d failed, longest window %s", r, len(tc.answers), tc.failures, tc.window)
			}
		})
	}
}
