package main

import (
	"slices"
	"testing"
)

func TestRolloutCaseFigures(t *testing.T) {
	c := rolloutCase{
		ChangedAt: 2, DoneAt: 4,
		Buckets: []hitBucket{
			{Gets: 100, Hits: 50}, {Gets: 100, Hits: 98},
			{Gets: 100, Hits: 60, Errors: 5}, {Gets: 100, Hits: 80}, {Gets: 100, Hits: 90}, {},
		},
		Servers: []serverList{
			{At: 0, Addresses: []string{"a", "b", "c"}},
			{At: 1, Addresses: []string{"a", "b", "d"}},
			{At: 2.5, Addresses: []string{"a", "b", "c", "e"}},
			{At: 3.5, Addresses: []string{"b", "c", "e"}},
		},
	}
	if got := c.span(1, 0, c.ChangedAt); got != (hitBucket{Gets: 200, Hits: 148}) {
		t.Errorf("before the change: %+v", got)
	}
	if got := c.span(1, c.ChangedAt, c.DoneAt); got != (hitBucket{Gets: 200, Hits: 140, Errors: 5}) {
		t.Errorf("during the rollout: %+v", got)
	}
	// Neither the low bucket before the change nor the empty one at the
	// end counts.
	if ratio, at := c.lowest(1, 1); ratio != 60 || at != 0 {
		t.Errorf("lowest over 1 s = %v at %v, want 60 at 0", ratio, at)
	}
	if ratio, at := c.lowest(1, 2); ratio != 70 || at != 0 {
		t.Errorf("lowest over 2 s = %v at %v, want 70 at 0", ratio, at)
	}
	// The list given at 1 s is the one in force at the change.
	if fewest, changes := c.fewestServers(); fewest != 3 || changes != 2 {
		t.Errorf("fewestServers = %d, %d changes; want 3, 2", fewest, changes)
	}
	if got, want := c.listChanges(), []string{"+c (0.5 s)", "+e (0.5 s)", "-d (0.5 s)", "-a (1.5 s)"}; !slices.Equal(got, want) {
		t.Errorf("listChanges = %q, want %q", got, want)
	}
	r := &rolloutResults{Config: rolloutConfig{Size: 4, BucketSeconds: 1}, Cases: []rolloutCase{c}}
	if got := rolloutFailures(r); len(got) != 1 {
		t.Errorf("a list of 3 addresses for 4 pods: failures %q, want one", got)
	}
}

func TestEvaluateRolloutTargets(t *testing.T) {
	at := func(pacing string, hits int64) rolloutCase {
		return rolloutCase{Pacing: pacing, Buckets: []hitBucket{{Gets: 100, Hits: hits}}}
	}
	for _, tc := range []struct {
		paced, unpaced int64
		met            bool
	}{{80, 60, true}, {79, 60, false}, {60, 80, false}} {
		r := &rolloutResults{Config: rolloutConfig{BucketSeconds: 1}, Cases: []rolloutCase{at("Warmth", tc.paced), at("None", tc.unpaced)}}
		got := evaluateRolloutTargets(r, "Warmth", "None")
		if len(got) != 1 || got[0].Met != tc.met {
			t.Errorf("lowest %d against %d: %+v, want met %v", tc.paced, tc.unpaced, got, tc.met)
		}
	}
	if got := evaluateRolloutTargets(&rolloutResults{Cases: []rolloutCase{at("Warmth", 90)}}, "Warmth", "None"); got != nil {
		t.Errorf("without the unpaced case: %+v, want no target", got)
	}
}
