package main

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/example-inc/memcached-operator/hack/local-cluster/memcachedproc"
)

// The memory scenario's fill against the memcached release shipped, on the host, small
// enough for make test: it must hold every connection memcached accepts
// and stop at its refusal, make it evict with small items, and store large
// ones from every connection at once without breaking one.
func TestFillEvictsOverEveryConnection(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const maxConns, threads = 64, 2
	srv, err := memcachedproc.Start(ctx, []string{"memcached", "--memory-limit=8", "--conn-limit=64", "--threads=2",
		"--max-item-size=1m", "--extended=modern"}, filepath.Join(t.TempDir(), "memcached.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = srv.Stop(10 * time.Second) }()
	fl := &filler{o: fillOptions{addr: srv.Addr, connections: maxConns, writers: 2 * threads, smallValue: 100, batch: 500,
		turnover: 0.1, largeValue: 1<<20 - largeHeadroom, largeFill: 1.5}}
	defer fl.close()
	if err := fl.openConnections(ctx); err != nil {
		t.Fatal(err)
	}
	// memcached keeps a few descriptors in reserve and refuses the
	// connections that would use them.
	if !fl.res.Refused || fl.res.Connections < maxConns/2 || fl.res.Connections >= maxConns {
		t.Errorf("held %d connections (refused: %v), want memcached to refuse one short of %d", fl.res.Connections, fl.res.Refused, maxConns)
	}
	stats, err := fl.ctl.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if got := statInt(stats, "curr_connections"); got < int64(fl.res.Connections) {
		t.Errorf("memcached counts %d connections, the fill holds %d", got, fl.res.Connections)
	}
	if err := fl.fillSmall(ctx, 8<<20); err != nil {
		t.Fatal(err)
	}
	if stats, err = fl.ctl.Stats(); err != nil {
		t.Fatal(err)
	}
	if ev, items := statInt(stats, "evictions"), statInt(stats, "curr_items"); ev == 0 || float64(ev) < 0.1*float64(items) {
		t.Errorf("after the small items: %d evictions of %d items, want at least a tenth", ev, items)
	}
	if err := fl.fillLarge(ctx, 8<<20); err != nil {
		t.Fatal(err)
	}
	r := fl.res
	t.Logf("fill: %+v", r)
	if r.LargeSets != int64(r.LargeRounds*r.Connections) || r.LargeStored+r.LargeOutOfMemory != r.LargeSets {
		t.Errorf("large items: %+v, want one set per connection and round, each stored or refused", r)
	}
	if stats, err = fl.ctl.Stats(); err != nil {
		t.Fatal(err)
	}
	if got := statInt(stats, "curr_connections"); got < int64(r.Connections) {
		t.Errorf("after the large items memcached counts %d connections, want the %d held", got, r.Connections)
	}
}
