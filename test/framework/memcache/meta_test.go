package memcache

import (
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/example-inc/memcached-operator/hack/local-cluster/memcachedproc"
)

// The meta commands against memcached itself, the release on the host: a
// quiet batch answers only its failures, in order, and Has finds what was
// stored and nothing else.
func TestMetaCommands(t *testing.T) {
	ctx := t.Context()
	srv, err := memcachedproc.Start(ctx, []string{"memcached", "--memory-limit=8", "--max-item-size=1m"},
		filepath.Join(t.TempDir(), "memcached.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = srv.Stop(10 * time.Second) }()
	c, err := Dial(ctx, srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()

	if l, err := c.Noop(); err != nil || l != "MN" {
		t.Fatalf("Noop = %q, %v; want MN", l, err)
	}
	key := func(i int) string { return "k" + strconv.Itoa(i) }
	if failed, err := c.SetQuiet(100, key, []byte("v")); err != nil || len(failed) != 0 {
		t.Fatalf("SetQuiet of 100 small items = %q, %v; want no failure", failed, err)
	}
	// Values over the item size limit: each answers its refusal.
	failed, err := c.SetQuiet(2, func(i int) string { return "big" + strconv.Itoa(i) }, make([]byte, 2<<20))
	if err != nil || !slices.Equal(failed, []string{"SERVER_ERROR object too large for cache", "SERVER_ERROR object too large for cache"}) {
		t.Fatalf("SetQuiet of 2 items over the limit = %q, %v; want two refusals", failed, err)
	}
	if l, err := c.MetaSet("large", make([]byte, 512<<10)); err != nil || l != "HD" {
		t.Fatalf("MetaSet = %q, %v; want HD", l, err)
	}
	for k, want := range map[string]bool{"k0": true, "k99": true, "large": true, "big0": false, "missing": false} {
		if got, err := c.Has(k); err != nil || got != want {
			t.Errorf("Has(%s) = %v, %v; want %v", k, got, err, want)
		}
	}
}
