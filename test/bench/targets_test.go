package main

import (
	"strings"
	"testing"
)

func TestCountedTargets(t *testing.T) {
	r := &results{}
	r.Scenarios.Converge = &convergeResult{OwnedObjects: 3, WritesPerObject: 4}
	r.Scenarios.Idle = &idleResult{WindowSeconds: 20, OtherWrites: 0, Reconciles: 0}
	if missed := missedCounted(evaluateTargets(r)); len(missed) != 0 {
		t.Fatalf("a run within the counted targets missed %v", missed)
	}
	r.Scenarios.Converge.WritesPerObject = 4.01
	r.Scenarios.Idle.Reconciles = 2
	missed := missedCounted(evaluateTargets(r))
	if len(missed) != 2 || !strings.Contains(missed[0], "API writes per Memcached while creating: 4.01") ||
		!strings.Contains(missed[1], "reconciles while idle: 2 in 20s") {
		t.Fatalf("missed = %q, want the writes and the idle reconciles", missed)
	}
	// A timed target is reported, never failed on.
	r.Scenarios.RSS = &rssResult{PeakRatio: 9, SteadyRatio: 9}
	if got := len(missedCounted(evaluateTargets(r))); got != 2 {
		t.Errorf("a missed RSS ratio counted: %d missed", got)
	}
}

func TestFloorAndBurstTargets(t *testing.T) {
	tests := []struct {
		name                      string
		convergeSeconds, p99Bound float64
		wantMet                   map[string]bool
	}{
		{name: "within both", convergeSeconds: 110, p99Bound: 0.005,
			wantMet: map[string]bool{"time to converge": true, "webhook p99 during": true}},
		{name: "slower than 1.1x the floor, p99 past 5 ms", convergeSeconds: 111, p99Bound: 0.01,
			wantMet: map[string]bool{"time to converge": false, "webhook p99 during": false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &results{}
			r.Scenarios.Floor = &floorResult{ConvergeSeconds: 100, APIServerCPUSeconds: 50}
			r.Scenarios.Converge = &convergeResult{Objects: 10, ConvergeSeconds: tt.convergeSeconds, APIServerCPUSeconds: 60,
				Admission: []webhookLatency{
					{Name: "fast", P99: 0.001, P99Bucket: 0.001},
					{Name: "slow", P99: tt.p99Bound * 0.9, P99Bucket: tt.p99Bound},
				}}
			found := map[string]bool{}
			for _, got := range evaluateTargets(r) {
				for prefix, want := range tt.wantMet {
					if !strings.HasPrefix(got.Name, prefix) {
						continue
					}
					found[prefix] = true
					if got.Met != want {
						t.Errorf("%s: met = %v, want %v (%s)", got.Name, got.Met, want, got.Value)
					}
					if prefix == "webhook p99 during" && !strings.HasPrefix(got.Value, "slow:") {
						t.Errorf("%s names %q, want the slow webhook", got.Name, got.Value)
					}
				}
			}
			if len(found) != len(tt.wantMet) {
				t.Errorf("targets found %v, want %v", found, tt.wantMet)
			}
		})
	}
}

func TestSerialCreateTarget(t *testing.T) {
	tests := []struct {
		name        string
		with        float64
		wantMet     bool
		wantInValue string
	}{
		{"webhooks add half", 15, true, "1.50 (15.0 s against 10.0 s)"},
		{"webhooks add more than half", 15.1, false, "1.51 (15.1 s against 10.0 s)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &results{}
			r.Scenarios.Webhook = &webhookResult{SerialCreates: 1000, SerialSecondsWith: tt.with, SerialSecondsWithout: 10}
			var got *target
			for _, x := range evaluateTargets(r) {
				if strings.HasPrefix(x.Name, "1000 creates one after another") {
					got = &x
				}
			}
			if got == nil {
				t.Fatal("no serial-create target")
			}
			if got.Met != tt.wantMet || got.Value != tt.wantInValue || got.Counted {
				t.Errorf("met %v, value %q, counted %v; want met %v, value %q, not counted", got.Met, got.Value, got.Counted, tt.wantMet, tt.wantInValue)
			}
		})
	}
}
