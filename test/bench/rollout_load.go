package main

import (
	"context"
	"errors"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"

	"github.com/example-inc/memcached-operator/test/framework/memcache"
)

// shardedLoad is the rollout scenario's client, as an application uses a
// Memcached: it shards keys over the servers its discovery last listed
// (rendezvous hashing, as pymemcache's HashClient and other clients do, so
// that a server's arrival or departure moves only that server's keys),
// reads keys of Zipf popularity at a fixed rate and, on a miss, stores the
// key as if read from the database behind the cache.
type shardedLoad struct {
	o       shardedLoadOptions
	servers atomic.Pointer[[]string]
	value   []byte

	mu      sync.Mutex
	start   time.Time
	buckets []hitBucket
}

type shardedLoadOptions struct {
	// keys is the key space; key i is the i-th most popular.
	keys int
	// zipfS is the Zipf exponent (> 1) of the keys' popularity.
	zipfS float64
	// rate is the gets per second, over workers connections per server.
	rate, workers int
	valueBytes    int
	// bucket is how long each hitBucket counts.
	bucket time.Duration
}

// hitBucket is what the load saw in one bucket of time. A get that failed
// (a server that refused or dropped the connection) is counted in Gets and
// Errors but not Hits: the application read the database.
type hitBucket struct {
	Gets   int64 `json:"gets"`
	Hits   int64 `json:"hits"`
	Errors int64 `json:"errors,omitempty"`
}

func newShardedLoad(o shardedLoadOptions) *shardedLoad {
	return &shardedLoad{o: o, value: make([]byte, o.valueBytes)}
}

// setServers is what the discovery found: host:port addresses.
func (l *shardedLoad) setServers(servers []string) {
	s := slices.Clone(servers)
	l.servers.Store(&s)
}

func loadKey(i uint64) string { return "key-" + strconv.FormatUint(i, 10) }

// pickServer is the server of key among servers by rendezvous hashing: the
// one whose hash with the key is highest. "" when there is none.
func pickServer(key string, servers []string) string {
	var best string
	var bestScore uint64
	for _, s := range servers {
		h := fnv.New64a()
		_, _ = h.Write([]byte(s))
		_, _ = h.Write([]byte{0})
		_, _ = h.Write([]byte(key))
		if score := mix64(h.Sum64()); best == "" || score > bestScore {
			best, bestScore = s, score
		}
	}
	return best
}

// mix64 is splitmix64's finalizer: FNV's low bits vary too little with the
// last bytes for the highest of a few hashes to be a fair draw.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// conns are one worker's connections, one per server, dialled when first
// needed and dropped on an error.
type conns map[string]*memcache.Client

func (cs conns) get(ctx context.Context, addr string) (*memcache.Client, error) {
	if c, ok := cs[addr]; ok {
		return c, nil
	}
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	c, err := memcache.Dial(ctx, addr)
	if err != nil {
		return nil, err
	}
	cs[addr] = c
	return c, nil
}

func (cs conns) drop(addr string) {
	if c, ok := cs[addr]; ok {
		_ = c.Close()
		delete(cs, addr)
	}
}

func (cs conns) close() {
	for addr := range cs {
		cs.drop(addr)
	}
}

// fill stores every key on its server, so that the caches start full.
func (l *shardedLoad) fill(ctx context.Context) error {
	var next atomic.Uint64
	errs := make([]error, l.o.workers)
	var wg sync.WaitGroup
	for w := range l.o.workers {
		wg.Go(func() {
			cs := conns{}
			defer cs.close()
			for i := next.Add(1) - 1; i < uint64(l.o.keys) && ctx.Err() == nil; i = next.Add(1) - 1 {
				key := loadKey(i)
				addr := pickServer(key, *l.servers.Load())
				c, err := cs.get(ctx, addr)
				if err == nil {
					err = c.Set(key, l.value)
				}
				if err != nil {
					errs[w] = err
					return
				}
			}
		})
	}
	wg.Wait()
	return errors.Join(append(errs, ctx.Err())...)
}

// run sends the load until ctx ends. The buckets start now.
func (l *shardedLoad) run(ctx context.Context) {
	l.mu.Lock()
	l.start = time.Now()
	l.mu.Unlock()
	lim := rate.NewLimiter(rate.Limit(l.o.rate), l.o.workers)
	var wg sync.WaitGroup
	for w := range l.o.workers {
		wg.Go(func() {
			// Seeded alike in every run, so that runs draw the same keys.
			l.work(ctx, lim, rand.New(rand.NewPCG(uint64(l.o.keys), uint64(w))))
		})
	}
	wg.Wait()
}

func (l *shardedLoad) work(ctx context.Context, lim *rate.Limiter, r *rand.Rand) {
	zipf := rand.NewZipf(r, l.o.zipfS, 1, uint64(l.o.keys-1))
	cs := conns{}
	defer cs.close()
	for lim.Wait(ctx) == nil {
		key := loadKey(zipf.Uint64())
		addr := pickServer(key, *l.servers.Load())
		hit, err := l.get(ctx, cs, addr, key)
		if err != nil {
			cs.drop(addr)
		}
		l.record(hit, err != nil)
	}
}

// get reads key from addr and stores it there on a miss.
func (l *shardedLoad) get(ctx context.Context, cs conns, addr, key string) (hit bool, err error) {
	if addr == "" {
		return false, errors.New("no server")
	}
	c, err := cs.get(ctx, addr)
	if err != nil {
		return false, err
	}
	_, err = c.Get(key)
	if errors.Is(err, memcache.ErrNotFound) {
		return false, c.Set(key, l.value)
	}
	return err == nil, err
}

func (l *shardedLoad) record(hit, failed bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	i := int(time.Since(l.start) / l.o.bucket)
	for len(l.buckets) <= i {
		l.buckets = append(l.buckets, hitBucket{})
	}
	b := &l.buckets[i]
	b.Gets++
	if hit {
		b.Hits++
	}
	if failed {
		b.Errors++
	}
}

// since is the seconds from the start of run to t.
func (l *shardedLoad) since(t time.Time) float64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return t.Sub(l.start).Seconds()
}

// results are the whole buckets of a run that ended: all but the last.
func (l *shardedLoad) results() []hitBucket {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.buckets) == 0 {
		return nil
	}
	return slices.Clone(l.buckets[:len(l.buckets)-1])
}
