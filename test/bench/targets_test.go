package main

import (
	"strings"
	"testing"
)

func TestCountedTargets(t *testing.T) {
	r := &results{}
	r.Scenarios.Converge = &convergeResult{OwnedObjects: 3, WritesPerObject: 4.4}
	r.Scenarios.Idle = &idleResult{WindowSeconds: 20, OtherWrites: 0, Reconciles: 0}
	if missed := missedCounted(evaluateTargets(r)); len(missed) != 0 {
		t.Fatalf("a run within the counted targets missed %v", missed)
	}
	r.Scenarios.Converge.WritesPerObject = 5.2
	r.Scenarios.Idle.Reconciles = 2
	missed := missedCounted(evaluateTargets(r))
	if len(missed) != 2 || !strings.Contains(missed[0], "API writes per Memcached while creating: 5.20") ||
		!strings.Contains(missed[1], "reconciles while idle: 2 in 20s") {
		t.Fatalf("missed = %q, want the writes and the idle reconciles", missed)
	}
	// A timed target is reported, never failed on.
	r.Scenarios.RSS = &rssResult{PeakRatio: 9, SteadyRatio: 9}
	if got := len(missedCounted(evaluateTargets(r))); got != 2 {
		t.Errorf("a missed RSS ratio counted: %d missed", got)
	}
}
