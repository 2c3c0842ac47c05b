package controllers

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
)

// defaultProgressInterval is how often, at most, a rollout's progress is
// written to a Memcached's status.
const defaultProgressInterval = 10 * time.Second

// progressWritesPerInterval is how many Memcached may progress at once with
// their progress written every interval. Beyond it the interval grows with
// their number, so that progress writes between them all stay at this many
// per interval (two a second by default): a thousand Memcached created or
// rolled at once would otherwise each write their progress every interval,
// API writes no reader needs while the control plane is at its busiest.
const progressWritesPerInterval = 20

// statusPacer decides when a changed status is written. A settled status
// (the rollout complete and every pod ready) and a failure are written at
// once. Progress in between ("2 of 3 pods ready") is written at most once
// per interval, and less often when many Memcached progress at once (see
// progressWritesPerInterval): kwok or a fast kubelet brings pods up within a
// few seconds of each other, and a write for each is an API write per
// Memcached that no reader needs, which at a thousand Memcached objects is
// most of the operator's load on the API server.
type statusPacer struct {
	interval time.Duration
	clock    clock.PassiveClock

	mu sync.Mutex
	// since holds, for each Memcached with progress not yet written, when
	// that progress was first held back (or last written).
	since map[types.NamespacedName]time.Time
}

func newStatusPacer(interval time.Duration, c clock.PassiveClock) *statusPacer {
	return &statusPacer{interval: interval, clock: c, since: map[types.NamespacedName]time.Time{}}
}

// wait is how long a status of key should wait before it is written: zero
// means write now when it changed. An unchanged status holds nothing back, so
// key no longer counts among the Memcached progressing: its progress came
// back to what is stored.
func (p *statusPacer) wait(key types.NamespacedName, changed, settled bool) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !changed || settled {
		delete(p.since, key)
		return 0
	}
	now := p.clock.Now()
	first, held := p.since[key]
	if !held {
		p.since[key] = now
		return p.currentInterval()
	}
	if elapsed, interval := now.Sub(first), p.currentInterval(); elapsed < interval {
		return interval - elapsed
	}
	p.since[key] = now
	return 0
}

// currentInterval is the interval stretched by the number of Memcached
// whose progress is held or was last written as progress: those still
// progressing. p.mu is held.
func (p *statusPacer) currentInterval() time.Duration {
	n := len(p.since)
	if n <= progressWritesPerInterval {
		return p.interval
	}
	return p.interval * time.Duration(n) / progressWritesPerInterval
}

// forget drops what the pacer holds for a Memcached that is gone.
func (p *statusPacer) forget(key types.NamespacedName) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.since, key)
}
