package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/example-inc/memcached-operator/test/framework/memcache"
)

// fillOptions are the memory scenario's load on one memcached: fill it
// with small items until it evicts, then with items near its largest, over
// as many connections as it accepts, every one of them busy at once.
type fillOptions struct {
	// addr is memcached's host:port; tls, when set, how to speak TLS to it.
	addr string
	tls  *tls.Config
	// connections is how many connections to hold open at most: memcached's
	// maxconns. memcached refuses the last few (it keeps file descriptors
	// in reserve), so fill holds as many as it accepts.
	connections int
	// writers is how many of them send the small items, pipelined: two per
	// memcached thread (memcached hands connections to its threads in
	// turn), so that every thread is busy.
	writers int
	// smallValue is the small items' size; batch how many sets a writer
	// sends before it waits for memcached to catch up (see tlsFillBatch).
	smallValue, batch int
	// turnover ends the small phase once memcached has evicted this share of
	// the items it holds.
	turnover float64
	// largeValue is the large items' size, largeFill how much of memcached's
	// memory they write, as a multiple of it: every connection sets and
	// gets large items, all at once, until that much was written.
	largeValue int
	largeFill  float64
}

// fillResult is what fill did and what memcached answered.
type fillResult struct {
	// Connections were held open at once (with the stats connection);
	// Refused says memcached refused the next one (its
	// rejected_connections rose),
	// as it does below maxconns to keep file descriptors in reserve.
	Connections int  `json:"connections"`
	Refused     bool `json:"refused"`
	// SmallSets counts the small items sent, SmallOutOfMemory those
	// memcached refused for want of memory; EvictionsAfterSmall memcached's
	// evictions at the end of that phase, SmallSeconds its length.
	SmallSets           int64   `json:"smallSets"`
	SmallOutOfMemory    int64   `json:"smallOutOfMemory"`
	SmallSeconds        float64 `json:"smallSeconds"`
	EvictionsAfterSmall int64   `json:"evictionsAfterSmall"`
	// LargeRounds is how many large items each connection set, then read
	// back; LargeStored those memcached stored, LargeOutOfMemory those it
	// refused for want of memory it could free (every item of a slab class
	// in flight on other connections); LargeHits the gets that found their
	// item still there.
	LargeRounds      int     `json:"largeRounds"`
	LargeSets        int64   `json:"largeSets"`
	LargeStored      int64   `json:"largeStored"`
	LargeOutOfMemory int64   `json:"largeOutOfMemory"`
	LargeHits        int64   `json:"largeHits"`
	LargeSeconds     float64 `json:"largeSeconds"`
}

// opTimeout bounds one exchange: a thousand connections sending a MiB each
// at once on a loaded two-core machine take seconds, not a minute.
const opTimeout = time.Minute

func dialFill(ctx context.Context, o fillOptions) (*memcache.Client, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var c *memcache.Client
	var err error
	if o.tls != nil {
		c, err = memcache.DialTLS(ctx, o.addr, o.tls)
	} else {
		c, err = memcache.Dial(ctx, o.addr)
	}
	if err != nil {
		return nil, err
	}
	c.SetTimeout(opTimeout)
	return c, nil
}

// outOfMemory reports whether l is memcached's answer to a set it has no
// memory for, when every item it could evict to make room is in use: "out
// of memory storing object" before it reads the value, "Out of memory
// during read" when a large item's next chunk cannot be had (memcached then
// discards the rest of the value, and the connection goes on).
func outOfMemory(l string) bool {
	return strings.HasPrefix(strings.ToLower(l), "server_error out of memory")
}

// setBatch sends n small sets in quiet mode and returns how many memcached
// refused for want of memory.
func setBatch(c *memcache.Client, prefix string, first, n int, value []byte) (oom int64, err error) {
	failed, err := c.SetQuiet(n, func(i int) string { return prefix + strconv.Itoa(first+i) }, value)
	for _, l := range failed {
		if !outOfMemory(l) {
			return oom, fmt.Errorf("a small set: %q", l)
		}
		oom++
	}
	return oom, err
}

// setLarge stores value under key and reports whether memcached stored it
// (false: it had no memory to free for it).
func setLarge(c *memcache.Client, key string, value []byte) (bool, error) {
	l, err := c.MetaSet(key, value)
	switch {
	case err != nil:
		return false, err
	case l == "HD":
		return true, nil
	case outOfMemory(l):
		return false, nil
	}
	return false, fmt.Errorf("set %s: %q", key, l)
}

func statInt(stats map[string]string, name string) int64 {
	n, _ := strconv.ParseInt(stats[name], 10, 64)
	return n
}

// filler runs the fill of one memcached: a stats connection and the
// connections it holds open.
type filler struct {
	o     fillOptions
	ctl   *memcache.Client
	conns []*memcache.Client
	res   fillResult
}

// openConnections opens connections until memcached holds o.connections of
// them (the stats connection among them) or refuses one. Each is proven
// with a no-op: memcached accepts a connection over its limit, then writes
// an error on it and closes it.
func (fl *filler) openConnections(ctx context.Context) error {
	ctl, err := dialFill(ctx, fl.o)
	if err != nil {
		return err
	}
	fl.ctl = ctl
	before, err := ctl.Stats()
	if err != nil {
		return err
	}
	for len(fl.conns)+1 < fl.o.connections {
		c, err := dialFill(ctx, fl.o)
		if err == nil {
			var l string
			if l, err = c.Noop(); err == nil && l != "MN" {
				err = fmt.Errorf("answered %q to a no-op", l)
			}
			if err != nil {
				_ = c.Close()
			}
		}
		if err != nil {
			refused, rerr := fl.refused(ctx, statInt(before, "rejected_connections"))
			if rerr != nil {
				return errors.Join(err, rerr)
			}
			if refused {
				fl.res.Refused = true
				break
			}
			return fmt.Errorf("connection %d: %w", len(fl.conns)+2, err)
		}
		fl.conns = append(fl.conns, c)
	}
	fl.res.Connections = len(fl.conns) + 1
	return nil
}

// refused reports whether memcached counted a refused connection beyond
// the before it had. It counts it after it wrote its refusal and closed the
// connection, so the count may lag the client's error a little.
func (fl *filler) refused(ctx context.Context, before int64) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	err := wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(context.Context) (bool, error) {
		stats, err := fl.ctl.Stats()
		return err == nil && statInt(stats, "rejected_connections") > before, err
	})
	if errors.Is(err, context.DeadlineExceeded) {
		return false, nil
	}
	return err == nil, err
}

// fillSmall has the writers set small items, pipelined, until memcached
// has evicted o.turnover of what it holds.
func (fl *filler) fillSmall(ctx context.Context, maxBytes int64) error {
	start := time.Now()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	writers := fl.conns[:min(fl.o.writers, len(fl.conns))]
	value := []byte(strings.Repeat("s", fl.o.smallValue))
	// A bound in case memcached never evicts: ten times its memory in
	// values alone.
	limit := 10 * maxBytes / int64(fl.o.smallValue) / int64(len(writers))
	var sets, oom atomic.Int64
	errs := make([]error, len(writers))
	var wg sync.WaitGroup
	for i, c := range writers {
		wg.Go(func() {
			prefix := "s" + strconv.Itoa(i) + ":"
			for n := 0; int64(n) < limit && ctx.Err() == nil; n += fl.o.batch {
				refused, err := setBatch(c, prefix, n, fl.o.batch, value)
				if err != nil {
					errs[i] = err
					cancel()
					return
				}
				sets.Add(int64(fl.o.batch))
				oom.Add(refused)
			}
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	var evictions int64
	err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(context.Context) (bool, error) {
		stats, err := fl.ctl.Stats()
		if err != nil {
			return false, err
		}
		evictions = statInt(stats, "evictions")
		select {
		case <-done:
			return true, nil
		default:
		}
		return evictions > 0 && float64(evictions) >= fl.o.turnover*float64(statInt(stats, "curr_items")), nil
	})
	cancel()
	<-done
	fl.res.SmallSets, fl.res.SmallOutOfMemory = sets.Load(), oom.Load()
	fl.res.SmallSeconds, fl.res.EvictionsAfterSmall = time.Since(start).Seconds(), evictions
	if werr := firstErrors(errs); werr != nil {
		return fmt.Errorf("small items: %w", werr)
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("small items: %w", err)
	}
	if evictions == 0 {
		return fmt.Errorf("small items: %d sent, and memcached evicted none", sets.Load())
	}
	return nil
}

// fillLarge has every connection set a large item and read it back, all at
// once, round after round, until o.largeFill times memcached's memory was
// written.
func (fl *filler) fillLarge(ctx context.Context, maxBytes int64) error {
	start := time.Now()
	conns := append([]*memcache.Client{fl.ctl}, fl.conns...)
	perRound := int64(fl.o.largeValue) * int64(len(conns))
	fl.res.LargeRounds = max(1, int((fl.o.largeFill*float64(maxBytes)+float64(perRound)-1)/float64(perRound)))
	value := []byte(strings.Repeat("L", fl.o.largeValue))
	var sets, stored, oom, hits atomic.Int64
	errs := make([]error, len(conns))
	begin := make(chan struct{})
	var wg sync.WaitGroup
	for i, c := range conns {
		wg.Go(func() {
			<-begin
			for r := range fl.res.LargeRounds {
				if ctx.Err() != nil {
					errs[i] = ctx.Err()
					return
				}
				key := "l" + strconv.Itoa(i) + ":" + strconv.Itoa(r)
				ok, err := setLarge(c, key, value)
				sets.Add(1)
				if err == nil {
					if ok {
						stored.Add(1)
						ok, err = c.Has(key)
						if ok {
							hits.Add(1)
						}
					} else {
						oom.Add(1)
					}
				}
				if err != nil {
					errs[i] = fmt.Errorf("connection %d: %w", i+1, err)
					return
				}
			}
		})
	}
	close(begin)
	wg.Wait()
	fl.res.LargeSets, fl.res.LargeStored, fl.res.LargeOutOfMemory, fl.res.LargeHits = sets.Load(), stored.Load(), oom.Load(), hits.Load()
	fl.res.LargeSeconds = time.Since(start).Seconds()
	if err := firstErrors(errs); err != nil {
		return fmt.Errorf("large items: %w", err)
	}
	// memcached may store none: once small items hold every page of its
	// memory, a large item needs pages moved to its slab class, which
	// memcached's slab mover does over tens of seconds. Until then it
	// refuses them, reading and discarding each value, which is the cost
	// this phase is after.
	return nil
}

// firstErrors joins the first few of errs and counts the rest: when
// memcached dies, every one of thousands of connections fails alike.
func firstErrors(errs []error) error {
	var out []error
	n := 0
	for _, err := range errs {
		if err == nil {
			continue
		}
		if n++; n <= 3 {
			out = append(out, err)
		}
	}
	if n > 3 {
		out = append(out, fmt.Errorf("and %d more connections", n-3))
	}
	return errors.Join(out...)
}

func (fl *filler) close() {
	if fl.ctl != nil {
		_ = fl.ctl.Close()
	}
	for _, c := range fl.conns {
		_ = c.Close()
	}
}
