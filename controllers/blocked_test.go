package controllers

import (
	"errors"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
	"github.com/example-inc/memcached-operator/api/v1/gen"
)

func TestCheckSizePolicy(t *testing.T) {
	policy := Options{DefaultSize: 3, MinSize: 2, MaxSize: 8}
	tests := []struct {
		name    string
		mc      *cachev1.Memcached
		o       Options
		blocked bool
	}{
		{"within", gen.Memcached("ns", "m", gen.WithSize(8)), policy, false},
		{"over the maximum", gen.Memcached("ns", "m", gen.WithSize(9)), policy, true},
		{"under the minimum", gen.Memcached("ns", "m", gen.WithSize(1)), policy, true},
		{"no size: the default", gen.Memcached("ns", "m"), policy, false},
		{"no policy: no bound", gen.Memcached("ns", "m", gen.WithSize(40)), Options{DefaultSize: 3}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkSizePolicy(tt.mc, tt.o)
			var b *blockedError
			if got := errors.As(err, &b); got != tt.blocked {
				t.Fatalf("checkSizePolicy = %v, blocked %v", err, tt.blocked)
			}
			if b != nil && (b.reason != cachev1.ReasonSizeOutOfPolicy || b.poll) {
				t.Errorf("%+v: want SizeOutOfPolicy, waiting for a change of the Memcached", b)
			}
		})
	}
}

func TestPollInterval(t *testing.T) {
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	r := &MemcachedReconciler{clock: clocktesting.NewFakeClock(now)}
	blockedSince := func(ago time.Duration) cachev1.MemcachedStatus {
		return cachev1.MemcachedStatus{Conditions: []metav1.Condition{{Type: cachev1.ConditionDegraded,
			Status: metav1.ConditionTrue, LastTransitionTime: metav1.NewTime(now.Add(-ago))}}}
	}
	polled := &blockedError{poll: true}
	tests := []struct {
		name string
		b    *blockedError
		st   cachev1.MemcachedStatus
		want time.Duration
	}{
		{"fixed by a change of the Memcached: no poll", &blockedError{}, blockedSince(time.Hour), 0},
		{"just blocked", polled, blockedSince(0), 10 * time.Second},
		{"blocked for a minute: waits a minute", polled, blockedSince(time.Minute), time.Minute},
		{"blocked for a day: at most five minutes", polled, blockedSince(24 * time.Hour), 5 * time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := r.pollInterval(tt.b, tt.st); got != tt.want {
				t.Errorf("pollInterval = %s, want %s", got, tt.want)
			}
		})
	}
}
