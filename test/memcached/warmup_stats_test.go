package memcached_test

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/example-inc/memcached-operator/api/v1/gen"
	"github.com/example-inc/memcached-operator/certs/certstest"
	"github.com/example-inc/memcached-operator/controllers/operand"
	"github.com/example-inc/memcached-operator/controllers/warmup"
	"github.com/example-inc/memcached-operator/hack/local-cluster/memcachedproc"
)

func TestReadCountsOfRealMemcached(t *testing.T) {
	memcachedproc.ForEachRelease(t, func(t *testing.T, rel memcachedproc.Release) {
		addr, c := serve(t, rel, operand.Command(operand.FromSpec(&gen.Memcached("ns", "a").Spec)))
		for _, k := range []string{"a", "b", "c"} {
			if err := c.Set(k, []byte("v")); err != nil {
				t.Fatal(err)
			}
		}
		for _, k := range []string{"a", "b", "x"} {
			_, _ = c.Get(k)
		}
		got, err := warmup.Read(t.Context(), addr, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if want := (warmup.Stats{GetHits: 2, GetMisses: 1, Items: 3}); got != want {
			t.Errorf("Read = %+v, want %+v", got, want)
		}
	})
}

// A server that is not memcached, or one that never stops answering, costs
// Read an error within its bounds, not a hang or unbounded memory.
func TestReadRefusesWhatIsNotMemcached(t *testing.T) {
	for name, tt := range map[string]struct{ answer, wantErr string }{
		"another protocol":     {"HTTP/1.1 400 Bad Request\r\n", `answered stats with "HTTP/1.1 400 Bad Request"`},
		"stats without items":  {"STAT get_hits 1\r\nSTAT get_misses 2\r\nEND\r\n", "stats without curr_items"},
		"a count that is not":  {"STAT get_hits many\r\n", "stat get_hits"},
		"stats that never end": {strings.Repeat("STAT pid 1\r\n", 10000), "did not end within 512 lines"},
		"no answer":            {"", "i/o timeout"},
	} {
		t.Run(name, func(t *testing.T) {
			done := make(chan struct{})
			t.Cleanup(func() { close(done) })
			addr := certstest.ServeConn(t, nil, func(conn net.Conn) {
				_, _ = conn.Write([]byte(tt.answer))
				<-done
			})
			_, err := warmup.Read(context.Background(), addr, 500*time.Millisecond)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Read: %v, want an error with %q", err, tt.wantErr)
			}
		})
	}
}
