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
		name                               string
		convergeSeconds, p99Bound, podsP99 float64
		wantMet                            map[string]bool
	}{
		{name: "within both", convergeSeconds: 110, p99Bound: 0.1, podsP99: 0.3,
			wantMet: map[string]bool{"time to converge": true, "webhook p99 during": true}},
		{name: "webhook p99 proven at the pod creates' p99", convergeSeconds: 110, p99Bound: 0.1, podsP99: 0.1,
			wantMet: map[string]bool{"time to converge": true, "webhook p99 during": true}},
		{name: "slower than 1.1x the floor, webhook p99 possibly past the pod creates'", convergeSeconds: 111, p99Bound: 0.1, podsP99: 0.09,
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
				},
				PodCreates: &webhookLatency{Name: "POST pods", P99: tt.podsP99}}
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

// The webhook scenario's ratio targets: serial creates through both webhooks
// against none, and the slowest handler's p99 in the operator's histogram.
func TestWebhookTargets(t *testing.T) {
	handlers := func(p99Bucket float64) *webhookResult {
		return &webhookResult{Handler: []webhookLatency{
			{Name: "/validate", P50: 0.0002, P99Bucket: 0.0001},
			{Name: "/mutate", P50: 0.0005, P99Bucket: p99Bucket},
		}}
	}
	serial := func(with float64) *webhookResult {
		return &webhookResult{SerialCreates: 1000, SerialSecondsWith: with, SerialSecondsWithout: 10}
	}
	tests := []struct {
		name, target string
		w            *webhookResult
		wantMet      bool
		wantValue    string
	}{
		{"serial: webhooks add half", "1000 creates one after another", serial(15), true, "1.50 (15.0 s against 10.0 s)"},
		{"serial: webhooks add more than half", "1000 creates one after another", serial(15.1), false, "1.51 (15.1 s against 10.0 s)"},
		{"handler: p99 within 1 ms", "webhook handler p99", handlers(0.001), true, "/mutate: in the bucket <= 1 ms; p50 0.50 ms"},
		{"handler: p99 in the next bucket", "webhook handler p99", handlers(0.01), false, "/mutate: in the bucket <= 10 ms; p50 0.50 ms"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &results{}
			r.Scenarios.Webhook = tt.w
			got := targetNamed(t, r, tt.target)
			if got.Met != tt.wantMet || got.Value != tt.wantValue || got.Counted {
				t.Errorf("met %v, value %q, counted %v; want met %v, value %q, not counted", got.Met, got.Value, got.Counted, tt.wantMet, tt.wantValue)
			}
		})
	}
}

// targetNamed is the target of r whose name starts with prefix.
func targetNamed(t *testing.T, r *results, prefix string) target {
	t.Helper()
	for _, x := range evaluateTargets(r) {
		if strings.HasPrefix(x.Name, prefix) {
			return x
		}
	}
	t.Fatalf("no target named %q...", prefix)
	return target{}
}
