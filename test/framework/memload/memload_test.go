package memload_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/example-inc/memcached-operator/controllers/operand"
	"github.com/example-inc/memcached-operator/hack/local-cluster/memcachedproc"
	"github.com/example-inc/memcached-operator/test/framework/memcache"
	"github.com/example-inc/memcached-operator/test/framework/memload"
)

// startMemcached runs the memcached release shipped (make memcached) with the
// operator's default command line on loopback.
func startMemcached(t *testing.T) *memcachedproc.Server {
	t.Helper()
	return memcachedproc.Shipped().Run(t, operand.Command(operand.DefaultSettings()))
}

// stats reads counters of memcached's "stats".
func stats(t *testing.T, addr string, names ...string) []int64 {
	t.Helper()
	c, err := memcache.Dial(context.Background(), addr)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	s, err := c.Stats()
	if err != nil {
		t.Fatal(err)
	}
	out := make([]int64, len(names))
	for i, n := range names {
		if out[i], err = strconv.ParseInt(s[n], 10, 64); err != nil {
			t.Fatalf("stats %s: %v", n, err)
		}
	}
	return out
}

// TestRunAgainstMemcached: what Run counts is what memcached served, in the
// fixed mix, within the time bound, and every request has a latency.
func TestRunAgainstMemcached(t *testing.T) {
	srv := startMemcached(t)
	o := memload.Options{Addr: srv.Addr, Connections: 4, Duration: time.Second, Keys: 1000}
	ctx := context.Background()
	if err := memload.Preload(ctx, o); err != nil {
		t.Fatal(err)
	}
	before := stats(t, srv.Addr, "cmd_get", "cmd_set", "get_hits")
	r, err := memload.Run(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	after := stats(t, srv.Addr, "cmd_get", "cmd_set", "get_hits")
	t.Logf("%d gets, %d sets in %s: %.0f ops/s, p50 %s, p99 %s", r.Gets, r.Sets, r.Elapsed, r.OpsPerSecond(),
		time.Duration(r.Latency.ValueAtQuantile(50)), time.Duration(r.Latency.ValueAtQuantile(99)))

	if r.Ops() < 100 {
		t.Fatalf("%d requests in %s", r.Ops(), r.Elapsed)
	}
	if gets, sets, hits := after[0]-before[0], after[1]-before[1], after[2]-before[2]; gets != r.Gets || sets != r.Sets || hits != r.Gets {
		t.Errorf("memcached served %d gets (%d hits) and %d sets, Run counted %d gets and %d sets", gets, hits, sets, r.Gets, r.Sets)
	}
	if r.Misses != 0 {
		t.Errorf("%d misses over a preloaded key set", r.Misses)
	}
	// Each connection's every tenth request is a set.
	if lo, hi := r.Ops()/10-int64(o.Connections), r.Ops()/10; r.Sets <= lo || r.Sets > hi {
		t.Errorf("%d sets of %d requests, want in (%d, %d]", r.Sets, r.Ops(), lo, hi)
	}
	if r.Latency.TotalCount() != r.Ops() || r.Latency.Min() <= 0 {
		t.Errorf("histogram holds %d latencies (least %d ns) of %d requests", r.Latency.TotalCount(), r.Latency.Min(), r.Ops())
	}
	if r.Elapsed < o.Duration || r.Elapsed > o.Duration+time.Second {
		t.Errorf("ran %s, want %s and not much more", r.Elapsed, o.Duration)
	}
}

// TestRunFailsWhenMemcachedGoes: a load that stops reaching memcached is an
// error, not a lower figure.
func TestRunFailsWhenMemcachedGoes(t *testing.T) {
	srv := startMemcached(t)
	o := memload.Options{Addr: srv.Addr, Connections: 2, Duration: 30 * time.Second, Keys: 10}
	ctx := context.Background()
	if err := memload.Preload(ctx, o); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	start := time.Now()
	go func() {
		_, err := memload.Run(ctx, o)
		done <- err
	}()
	// Killed once requests flow, so that it goes mid-run.
	NewWithT(t).Eventually(func() int64 { return stats(t, srv.Addr, "cmd_get")[0] }).
		WithTimeout(10*time.Second).WithPolling(10*time.Millisecond).
		ShouldNot(BeZero(), "a get reached memcached")
	if err := srv.Kill(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "memload") {
			t.Fatalf("Run after memcached was killed = %v, want its error", err)
		}
		t.Logf("after %s: %v", time.Since(start).Round(time.Millisecond), err)
	case <-time.After(20 * time.Second):
		t.Fatal("Run goes on after memcached was killed")
	}
}

func TestOptionsRefused(t *testing.T) {
	for _, o := range []memload.Options{{}, {Addr: "127.0.0.1:1"}, {Addr: "127.0.0.1:1", Duration: time.Second, Connections: -1}} {
		if _, err := memload.Run(context.Background(), o); err == nil || !strings.Contains(err.Error(), "memload: ") {
			t.Errorf("Run(%+v) = %v, want a refusal", o, err)
		}
	}
}
