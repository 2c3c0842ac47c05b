package controllers

import (
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
)

func TestStatusPacer(t *testing.T) {
	const interval = 10 * time.Second
	a := types.NamespacedName{Namespace: "ns", Name: "a"}
	b := types.NamespacedName{Namespace: "ns", Name: "b"}

	type step struct {
		advance time.Duration
		key     types.NamespacedName
		settled bool
		// unchanged: the status the reconcile computed is the stored one.
		unchanged bool
		forget    bool
		want      time.Duration
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"a settled status is written at once", []step{
			{key: a, settled: true, want: 0},
		}},
		{"progress waits one interval from when it was first held", []step{
			{key: a, want: interval},
			{advance: 3 * time.Second, key: a, want: 7 * time.Second},
			{advance: 7 * time.Second, key: a, want: 0},
		}},
		{"after a progress write the next waits a whole interval", []step{
			{key: a, want: interval},
			{advance: interval, key: a, want: 0},
			{advance: 4 * time.Second, key: a, want: 6 * time.Second},
		}},
		{"settling ends the wait and starts over", []step{
			{key: a, want: interval},
			{advance: time.Second, key: a, settled: true, want: 0},
			{advance: time.Second, key: a, want: interval},
		}},
		{"objects are paced apart", []step{
			{key: a, want: interval},
			{advance: 5 * time.Second, key: b, want: interval},
			{advance: 5 * time.Second, key: a, want: 0},
		}},
		{"an unchanged status lets go of what was held", []step{
			{key: a, want: interval},
			{advance: 9 * time.Second, key: a, unchanged: true, want: 0},
			{advance: time.Second, key: a, want: interval},
		}},
		{"a forgotten object starts over", []step{
			{key: a, want: interval},
			{advance: 9 * time.Second, key: a, forget: true},
			{key: a, want: interval},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := clocktesting.NewFakePassiveClock(time.Unix(0, 0))
			p := newStatusPacer(interval, clk)
			for i, s := range tt.steps {
				clk.SetTime(clk.Now().Add(s.advance))
				if s.forget {
					p.forget(s.key)
					continue
				}
				if got := p.wait(s.key, !s.unchanged, s.settled); got != s.want {
					t.Fatalf("step %d: wait(%s, settled=%v) = %s, want %s", i, s.key.Name, s.settled, got, s.want)
				}
			}
		})
	}
}

// TestDefaultProgressPacing drives the pacer at the interval a reconciler
// gets when none is given (see NewMemcachedReconciler) through a two-minute
// rollout whose pods report progress every half second, each report a
// reconcile: progress is written at most every ten seconds, and not less
// often.
func TestDefaultProgressPacing(t *testing.T) {
	o := Options{}.withDefaults()
	if o.ProgressInterval != 10*time.Second {
		t.Fatalf("default progress interval = %s, want 10s", o.ProgressInterval)
	}
	start := time.Unix(0, 0)
	clk := clocktesting.NewFakePassiveClock(start)
	p := newStatusPacer(o.ProgressInterval, clk)
	key := types.NamespacedName{Namespace: "ns", Name: "a"}

	var writes []time.Duration
	for at := time.Duration(0); at <= 2*time.Minute; at += 500 * time.Millisecond {
		clk.SetTime(start.Add(at))
		if p.wait(key, true, false) == 0 {
			writes = append(writes, at)
		}
	}
	if len(writes) != 12 {
		t.Errorf("%d progress writes in two minutes, want 12 (one every 10 s): %v", len(writes), writes)
	}
	for i := 1; i < len(writes); i++ {
		if gap := writes[i] - writes[i-1]; gap < 10*time.Second {
			t.Errorf("progress written at %s and again at %s, %s apart: want at least 10s", writes[i-1], writes[i], gap)
		}
	}
}

// TestProgressPacingUnderLoad: while more Memcached progress at once than
// progressWritesPerInterval, each one's progress waits longer, so that
// their progress writes together stay at that many per interval; as they
// settle, the interval shrinks back.
func TestProgressPacingUnderLoad(t *testing.T) {
	const interval = 10 * time.Second
	clk := clocktesting.NewFakePassiveClock(time.Unix(0, 0))
	p := newStatusPacer(interval, clk)
	key := func(i int) types.NamespacedName {
		return types.NamespacedName{Namespace: "ns", Name: fmt.Sprintf("mc-%d", i)}
	}
	check := func(i int, want time.Duration) {
		t.Helper()
		if got := p.wait(key(i), true, false); got != want {
			t.Fatalf("%d progressing: wait(%s) = %s, want %s", len(p.since), key(i).Name, got, want)
		}
	}
	for i := range progressWritesPerInterval {
		check(i, interval)
	}
	// 21 progressing: 21/20 of the interval; 100: five times.
	check(progressWritesPerInterval, interval*21/20)
	for i := progressWritesPerInterval + 1; i < 99; i++ {
		p.wait(key(i), true, false)
	}
	check(99, 5*interval)
	clk.SetTime(clk.Now().Add(interval))
	check(0, 4*interval)
	clk.SetTime(clk.Now().Add(4 * interval))
	check(0, 0)
	// All but 20 settle, or come back to their stored status: the others'
	// progress is written every interval again.
	for i := progressWritesPerInterval; i < 100; i++ {
		if got := p.wait(key(i), i%2 == 0, true); got != 0 {
			t.Fatalf("settled %s waits %s", key(i).Name, got)
		}
	}
	clk.SetTime(clk.Now().Add(interval))
	check(0, 0)
	check(1, 0)
}
