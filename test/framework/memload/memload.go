package memload

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/example-inc/memcached-operator/test/framework/memcache"
)

// Options are the load. Zero fields take the defaults of WithDefaults.
type Options struct {
	// Addr is memcached's host:port.
	Addr string
	// Connections is how many connections send requests at once (32).
	Connections int
	// Duration bounds the run; it must be set.
	Duration time.Duration
	// Keys is the size of the preloaded key set the requests pick from,
	// uniformly (10,000).
	Keys int
	// ValueSize is the size of every value (100 bytes).
	ValueSize int
	// SetEvery makes every SetEvery-th request of a connection a set of a
	// key of the set, the others gets (10: 90 % gets).
	SetEvery int
}

// WithDefaults is o with every zero field but Addr and Duration defaulted.
func (o Options) WithDefaults() Options {
	if o.Connections == 0 {
		o.Connections = 32
	}
	if o.Keys == 0 {
		o.Keys = 10000
	}
	if o.ValueSize == 0 {
		o.ValueSize = 100
	}
	if o.SetEvery == 0 {
		o.SetEvery = 10
	}
	return o
}

func (o Options) validate() error {
	var errs []error
	if o.Addr == "" {
		errs = append(errs, errors.New("Options.Addr is empty"))
	}
	if o.Duration <= 0 {
		errs = append(errs, fmt.Errorf("Options.Duration must be positive, got %s", o.Duration))
	}
	if o.Connections < 1 || o.Keys < 1 || o.ValueSize < 1 || o.SetEvery < 1 {
		errs = append(errs, fmt.Errorf("Options.Connections (%d), Keys (%d), ValueSize (%d) and SetEvery (%d) must be positive",
			o.Connections, o.Keys, o.ValueSize, o.SetEvery))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("memload: %w", err)
	}
	return nil
}

// Result is what a run served.
type Result struct {
	// Elapsed is from the first request to the last reply.
	Elapsed time.Duration
	// Gets, Sets and Misses count the requests answered; a miss is a get
	// of a preloaded key that memcached did not hold (evicted).
	Gets, Sets, Misses int64
	// Latency holds every request's latency, in nanoseconds, from 1 µs
	// to 10 s with three significant digits.
	Latency *hdrhistogram.Histogram
}

// Ops is the number of requests answered.
func (r Result) Ops() int64 { return r.Gets + r.Sets }

// OpsPerSecond is the throughput.
func (r Result) OpsPerSecond() float64 { return float64(r.Ops()) / r.Elapsed.Seconds() }

// NewHistogram is a histogram of the range Result.Latency holds, to merge
// several runs' latencies into.
func NewHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(int64(time.Microsecond), int64(10*time.Second), 3)
}

// key is the i-th key of the set.
func key(i int) string { return fmt.Sprintf("memload:%06d", i) }

func value(size int) []byte { return []byte(strings.Repeat("v", size)) }

// Preload stores every key of the set once, so that gets hit.
func Preload(ctx context.Context, o Options) error {
	o = o.WithDefaults()
	if err := o.validate(); err != nil {
		return err
	}
	c, err := memcache.Dial(ctx, o.Addr)
	if err != nil {
		return err
	}
	defer func() { _ = c.Close() }()
	v := value(o.ValueSize)
	for i := range o.Keys {
		if err := c.Set(key(i), v); err != nil {
			return fmt.Errorf("memload: preloading: %w", err)
		}
	}
	return nil
}

// Run sends the load for o.Duration and returns what was served. Every
// connection is open before the first request. A request that fails ends
// the run with its error: a load that only partly reached memcached
// measures nothing.
func Run(ctx context.Context, o Options) (Result, error) {
	o = o.WithDefaults()
	if err := o.validate(); err != nil {
		return Result{}, err
	}
	clients := make([]*memcache.Client, 0, o.Connections)
	defer func() {
		for _, c := range clients {
			_ = c.Close()
		}
	}()
	for range o.Connections {
		c, err := memcache.Dial(ctx, o.Addr)
		if err != nil {
			return Result{}, fmt.Errorf("memload: connecting: %w", err)
		}
		clients = append(clients, c)
	}
	// A cancelled ctx closes the connections, which ends every request
	// in flight.
	stop := context.AfterFunc(ctx, func() {
		for _, c := range clients {
			_ = c.Close()
		}
	})
	defer stop()

	keys := make([]string, o.Keys)
	for i := range keys {
		keys[i] = key(i)
	}
	results := make([]Result, o.Connections)
	errs := make([]error, o.Connections)
	var wg sync.WaitGroup
	start := time.Now()
	deadline := start.Add(o.Duration)
	for i, c := range clients {
		wg.Go(func() {
			results[i], errs[i] = drive(c, o, keys, deadline, rand.New(rand.NewPCG(uint64(i), 0)))
		})
	}
	wg.Wait()
	r := Result{Elapsed: time.Since(start), Latency: NewHistogram()}
	if err := errors.Join(errs...); err != nil {
		return r, fmt.Errorf("memload: %w", errors.Join(ctx.Err(), err))
	}
	for _, x := range results {
		r.Gets += x.Gets
		r.Sets += x.Sets
		r.Misses += x.Misses
		r.Latency.Merge(x.Latency)
	}
	return r, nil
}

// drive is one connection's loop until deadline.
func drive(c *memcache.Client, o Options, keys []string, deadline time.Time, rng *rand.Rand) (Result, error) {
	r := Result{Latency: NewHistogram()}
	v := value(o.ValueSize)
	for n := 1; ; n++ {
		t0 := time.Now()
		if !t0.Before(deadline) {
			return r, nil
		}
		k := keys[rng.IntN(len(keys))]
		var err error
		if n%o.SetEvery == 0 {
			err = c.Set(k, v)
			r.Sets++
		} else {
			_, err = c.Get(k)
			if errors.Is(err, memcache.ErrNotFound) {
				r.Misses, err = r.Misses+1, nil
			}
			r.Gets++
		}
		if err != nil {
			return r, err
		}
		// Values beyond the range are recorded at its top.
		_ = r.Latency.RecordValue(min(int64(time.Since(t0)), r.Latency.HighestTrackableValue()))
	}
}
