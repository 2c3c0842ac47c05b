package main

import (
	"testing"

	"github.com/google/pprof/profile"
)

// A profile of three stacks: main -> reconcile -> encode (2 s),
// main -> reconcile (1 s) and main -> gc (1 s). Equal flat times rank by cum.
func TestTopEntries(t *testing.T) {
	fn := map[string]*profile.Function{}
	loc := func(name string) *profile.Location {
		if fn[name] == nil {
			fn[name] = &profile.Function{ID: uint64(len(fn) + 1), Name: name}
		}
		return &profile.Location{Line: []profile.Line{{Function: fn[name]}}}
	}
	sample := func(ns int64, leafFirst ...string) *profile.Sample {
		s := &profile.Sample{Value: []int64{ns}}
		for _, name := range leafFirst {
			s.Location = append(s.Location, loc(name))
		}
		return s
	}
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "cpu", Unit: "nanoseconds"}},
		Sample: []*profile.Sample{
			sample(2e9, "encode", "reconcile", "main"),
			sample(1e9, "reconcile", "main"),
			sample(1e9, "gc", "main"),
		},
	}
	entries, total, err := top(p, "cpu", 1e-9)
	if err != nil {
		t.Fatal(err)
	}
	want := []profileEntry{
		{Function: "encode", Flat: 2, Cum: 2},
		{Function: "reconcile", Flat: 1, Cum: 3},
		{Function: "gc", Flat: 1, Cum: 1},
		{Function: "main", Flat: 0, Cum: 4},
	}
	if total != 4 || len(entries) != len(want) {
		t.Fatalf("total %v, entries %+v; want 4 and %+v", total, entries, want)
	}
	for i := range want {
		if entries[i] != want[i] {
			t.Errorf("entry %d = %+v, want %+v", i, entries[i], want[i])
		}
	}
	byCum, err := topByCum(p, "cpu", 1e-9, 0.9*total)
	if err != nil {
		t.Fatal(err)
	}
	if len(byCum) != 3 || byCum[0].Function != "reconcile" {
		t.Errorf("by cum without the root: %+v, want reconcile first and main left out", byCum)
	}
	if _, _, err := top(p, "alloc_space", 1); err == nil {
		t.Error("a sample type the profile lacks is not an error")
	}
}
