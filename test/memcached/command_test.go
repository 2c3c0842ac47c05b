package memcached_test

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
	"github.com/example-inc/memcached-operator/api/v1/gen"
	"github.com/example-inc/memcached-operator/certs/certstest"
	"github.com/example-inc/memcached-operator/controllers/operand"
	"github.com/example-inc/memcached-operator/hack/local-cluster/memcachedproc"
	"github.com/example-inc/memcached-operator/test/framework/memcache"
)

// TestCommandAgainstMemcached runs memcached, the release the operator
// ships and the oldest supported (make memcached), with the command line
// built from specs at the edges of what admission accepts, and reads the
// settings back from memcached itself. For the specs admission refuses, it
// shows that memcached refuses them too, or says why admission is stricter.
func TestCommandAgainstMemcached(t *testing.T) {
	memcachedproc.ForEachRelease(t, testCommandAgainst)
}

func testCommandAgainst(t *testing.T, rel memcachedproc.Release) {
	accepted := []struct {
		name string
		mc   *cachev1.Memcached
	}{
		{"the defaults", gen.Memcached("ns", "a")},
		{"the least memory, with the smallest item size", gen.Memcached("ns", "a", gen.WithMemory("1Mi"), gen.WithMaxItemSize("512Ki"))},
		{"the largest item size", gen.Memcached("ns", "a", gen.WithMemory("2Gi"), gen.WithMaxItemSize("1Gi"))},
		{"an item size of three chunks", gen.Memcached("ns", "a", gen.WithMaxItemSize("1536Ki"))},
		{"an item size of exactly half the memory", gen.Memcached("ns", "a", gen.WithMemory("8Mi"), gen.WithMaxItemSize("4Mi"))},
		{"a large memory, which memcached does not allocate at start", gen.Memcached("ns", "a", gen.WithMemory("64Gi"))},
		{"one thread, with the fewest connections", gen.Memcached("ns", "a", gen.WithThreads(1), gen.WithMaxConnections(21))},
		{"64 threads, the most without memcached's warning", gen.Memcached("ns", "a", gen.WithThreads(64))},
		{"256 threads, with the fewest connections", gen.Memcached("ns", "a", gen.WithThreads(256), gen.WithMaxConnections(1296))},
		{"many connections", gen.Memcached("ns", "a", gen.WithMaxConnections(16384))},
	}
	for _, tt := range accepted {
		t.Run("accepts "+tt.name, func(t *testing.T) {
			if errs := operand.Validate(&tt.mc.Spec, field.NewPath("spec")); len(errs) > 0 {
				t.Fatalf("admission refuses it: %v", errs.ToAggregate())
			}
			want := operand.FromSpec(&tt.mc.Spec)
			got := runMemcached(t, rel, operand.Command(want))
			if got != want {
				t.Errorf("memcached reports %+v, the spec asks for %+v", got, want)
			}
		})
	}

	refused := []struct {
		name string
		mc   *cachev1.Memcached
		// memcachedSays is what memcached prints when it refuses the same
		// settings; empty when admission alone refuses them, with the
		// reason in why. oldestSays is what the oldest release prints
		// where it differs.
		memcachedSays, oldestSays string
		why                       string
		// memcachedStarts: memcached takes the settings, and the test
		// shows it, so that why is the whole reason for refusing them.
		memcachedStarts bool
	}{
		{name: "no memory", mc: gen.Memcached("ns", "a", gen.WithMemory("0")),
			memcachedSays: "Cannot set item size limit higher than 1/2 of memory max."},
		{name: "an item size of more than half the memory", mc: gen.Memcached("ns", "a", gen.WithMemory("7Mi"), gen.WithMaxItemSize("4Mi")),
			memcachedSays: "Cannot set item size limit higher than 1/2 of memory max."},
		{name: "an item size below 1Ki", mc: gen.Memcached("ns", "a", gen.WithMaxItemSize("1023")),
			memcachedSays: "Item max size cannot be less than 1024 bytes."},
		{name: "an item size of 1Ki", mc: gen.Memcached("ns", "a", gen.WithMaxItemSize("1Ki")),
			memcachedSays: "slab_chunk_max (bytes: 524288) cannot be larger than -I"},
		{name: "an item size just below the slab chunk", mc: gen.Memcached("ns", "a", gen.WithMaxItemSize("511Ki")),
			memcachedSays: "slab_chunk_max (bytes: 524288) cannot be larger than -I"},
		{name: "an item size that is not a multiple of the slab chunk", mc: gen.Memcached("ns", "a", gen.WithMaxItemSize("1280Ki")),
			memcachedSays: "must be evenly divisible by slab_chunk_max"},
		{name: "an item size above 1Gi", mc: gen.Memcached("ns", "a", gen.WithMemory("4Gi"), gen.WithMaxItemSize("1536Mi")),
			memcachedSays: "Cannot set item size limit higher than a gigabyte."},
		{name: "no threads", mc: gen.Memcached("ns", "a", gen.WithThreads(0)),
			memcachedSays: "Number of threads must be greater than 0"},
		{name: "no connections", mc: gen.Memcached("ns", "a", gen.WithMaxConnections(0)),
			memcachedSays: "Maximum connections must be greater than 0"},
		{name: "fewer connections than the threads' descriptors", mc: gen.Memcached("ns", "a", gen.WithThreads(220)),
			// Which call runs out (memcached's eventfd or libevent's epoll and
			// socketpair) depends on the descriptors it inherits: CI's runner
			// passes three more than a shell does.
			memcachedSays: "Too many open files", oldestSays: "Maxconns setting is too low"},
		{name: "connections that leave no room for clients", mc: gen.Memcached("ns", "a", gen.WithMaxConnections(35)),
			why: "memcached starts with 4 threads and 35 connections, but counts 20 descriptors for its threads " +
				"and its own sockets against them; admission keeps 16 for clients", memcachedStarts: true},
		{name: "a memory that is not a whole number of MiB", mc: gen.Memcached("ns", "a", gen.WithMemory("1536Ki")),
			why: "memcached takes --memory-limit in whole MiB (atoi): 1536Ki cannot be given to it"},
		{name: "an item size that is a fraction", mc: gen.Memcached("ns", "a", gen.WithMaxItemSize("1m")),
			why: "1m is a thousandth of a byte: a typo for 1Mi that cannot be given to memcached"},
	}
	for _, tt := range refused {
		t.Run("refuses "+tt.name, func(t *testing.T) {
			if errs := operand.Validate(&tt.mc.Spec, field.NewPath("spec")); len(errs) == 0 {
				t.Fatal("admission accepts it")
			}
			if tt.memcachedSays == "" {
				if tt.why == "" {
					t.Fatal("refused by admission alone without a reason")
				}
				if tt.memcachedStarts {
					want := operand.FromSpec(&tt.mc.Spec)
					if got := runMemcached(t, rel, operand.Command(want)); got != want {
						t.Errorf("memcached reports %+v, want %+v", got, want)
					}
				}
				return
			}
			stderr, err := startFails(t, rel, operand.Command(operand.FromSpec(&tt.mc.Spec)))
			if err != nil {
				t.Fatal(err)
			}
			says := tt.memcachedSays
			if rel == memcachedproc.Oldest() && tt.oldestSays != "" {
				says = tt.oldestSays
			}
			if !strings.Contains(stderr, says) {
				t.Errorf("memcached said %q, want %q", stderr, says)
			}
		})
	}
}

// serve starts rel's memcached with cmd on the host until the test ends,
// and returns its address and a client of it.
func serve(t *testing.T, rel memcachedproc.Release, cmd []string) (string, *memcache.Client) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv := rel.Run(t, cmd)
	c, err := memcache.Dial(ctx, srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return srv.Addr, c
}

// runMemcached starts rel's memcached with cmd on the host, checks that it
// serves, and returns the settings it reports.
func runMemcached(t *testing.T, rel memcachedproc.Release, cmd []string) operand.Settings {
	t.Helper()
	_, c := serve(t, rel, cmd)
	if err := c.Set("k", []byte("v")); err != nil {
		t.Fatalf("set: %v", err)
	}
	if v, err := c.Get("k"); err != nil || string(v) != "v" {
		t.Fatalf("get: %q, %v", v, err)
	}
	stats, err := c.StatsSettings()
	if err != nil {
		t.Fatal(err)
	}
	return settingsFromStats(t, stats)
}

// startFails runs rel's memcached with cmd and returns what it printed when
// it exited with an error; it is an error if memcached keeps running.
func startFails(t *testing.T, rel memcachedproc.Release, cmd []string) (string, error) {
	t.Helper()
	ports, err := certstest.FreePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	bin, args, err := rel.Command(memcachedproc.Args(cmd, ports[0])...)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, args...).CombinedOutput()
	var exit *exec.ExitError
	switch {
	case ctx.Err() != nil:
		return "", fmt.Errorf("memcached started with %q", cmd)
	case !errors.As(err, &exit):
		return "", fmt.Errorf("running memcached: %v", err)
	}
	return string(out), nil
}

func settingsFromStats(t *testing.T, stats map[string]string) operand.Settings {
	t.Helper()
	num := func(key string) int64 {
		n, err := strconv.ParseInt(stats[key], 10, 64)
		if err != nil {
			t.Fatalf("stats settings %s: %v", key, err)
		}
		return n
	}
	return operand.Settings{
		MemoryMiB:      num("maxbytes") / (1 << 20),
		MaxItemSize:    num("item_size_max"),
		MaxConnections: num("maxconns"),
		Threads:        num("num_threads"),
	}
}
