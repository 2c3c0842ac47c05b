package main

import (
	"context"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/example-inc/memcached-operator/api/v1/gen"
	"github.com/example-inc/memcached-operator/controllers/operand"
	"github.com/example-inc/memcached-operator/hack/local-cluster/memcachedproc"
)

// A server that joins takes keys from every other server and nothing else
// moves; a server that leaves gives its keys out and nothing else moves.
// Each holds its share, give or take a few percent.
func TestPickServerMovesOnlyTheChangedServersKeys(t *testing.T) {
	const keys = 30000
	three := []string{"10.88.0.2:11211", "10.88.0.3:11211", "10.88.0.4:11211"}
	four := append([]string{"10.88.0.5:11211"}, three...)
	two := three[1:]
	share := func(servers []string) map[string]int {
		n := map[string]int{}
		for i := range keys {
			n[pickServer(loadKey(uint64(i)), servers)]++
		}
		return n
	}
	for _, tc := range []struct {
		name     string
		from, to []string
		// changed is the server whose keys may move: the one that joins
		// or leaves.
		changed string
	}{
		{"a server joins", three, four, four[0]},
		{"a server leaves", three, two, three[0]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			moved := 0
			for i := range keys {
				k := loadKey(uint64(i))
				before, after := pickServer(k, tc.from), pickServer(k, tc.to)
				if before == after {
					continue
				}
				moved++
				if before != tc.changed && after != tc.changed {
					t.Fatalf("key %s moved from %s to %s, neither of which changed", k, before, after)
				}
			}
			if moved == 0 {
				t.Error("no key moved")
			}
			for s, n := range share(tc.to) {
				if want := keys / len(tc.to); n < want*9/10 || n > want*11/10 {
					t.Errorf("%s holds %d keys of %d, want about %d", s, n, keys, want)
				}
			}
		})
	}
	if got := pickServer("k", nil); got != "" {
		t.Errorf("pickServer of no servers = %q", got)
	}
}

// The load fills two real memcached and reads back what it stored: every
// get after the fill hits, until a server that leaves the list takes its
// keys along, whose gets then miss and refill on the server that has them
// now, so that the next second misses less.
func TestShardedLoadAgainstMemcached(t *testing.T) {
	cmd := operand.Command(operand.FromSpec(&gen.Memcached("ns", "a").Spec))
	var servers []string
	for _, host := range []string{"127.0.0.31", "127.0.0.32"} {
		srv, err := memcachedproc.Shipped().StartAt(t.Context(), cmd, host, operand.Port, t.TempDir()+"/memcached.log")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = srv.Stop(10 * time.Second) })
		servers = append(servers, net.JoinHostPort(host, strconv.Itoa(operand.Port)))
	}
	l := newShardedLoad(shardedLoadOptions{keys: 500, zipfS: 1.01, rate: 2000, workers: 4, valueBytes: 100, bucket: 100 * time.Millisecond})
	l.setServers(servers)
	if err := l.fill(t.Context()); err != nil {
		t.Fatal(err)
	}
	run := func(d time.Duration) hitBucket {
		ctx, cancel := context.WithTimeout(t.Context(), d)
		defer cancel()
		l.run(ctx)
		var sum hitBucket
		for _, b := range l.results() {
			sum.Gets, sum.Hits, sum.Errors = sum.Gets+b.Gets, sum.Hits+b.Hits, sum.Errors+b.Errors
		}
		return sum
	}
	if got := run(time.Second); got.Gets < 500 || got.Hits != got.Gets || got.Errors != 0 {
		t.Fatalf("after the fill, %+v: want every get of at least 500 to hit", got)
	}
	l.setServers(servers[1:])
	l.buckets = nil
	left := run(time.Second)
	if left.Hits == left.Gets || left.Hits == 0 || left.Errors != 0 {
		t.Fatalf("after a server left, %+v: want misses of its keys and hits of the others'", left)
	}
	// What missed was stored where the keys live now: the next second
	// misses less than half as often (only keys not read in the first).
	l.buckets = nil
	again := run(time.Second)
	t.Logf("hit ratio after a server left: %.1f %% the first second, %.1f %% the next", left.hitRatio(), again.hitRatio())
	if 100-again.hitRatio() >= (100-left.hitRatio())/2 {
		t.Errorf("the second second after a server left hit %.1f %%, the first %.1f %%: the misses were not refilled",
			again.hitRatio(), left.hitRatio())
	}
}
