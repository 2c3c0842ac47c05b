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

// statusPacer decides when a changed status is written. A settled status
// (the rollout complete and every pod ready) and a failure are written at
// once. Progress in between ("2 of 3 pods ready") is written at most once
// per interval: kwok or a fast kubelet brings pods up within a few seconds
// of each other, and a write for each is an API write per Memcached that no
// reader needs, which at a thousand Memcached objects is most of the
// operator's load on the API server.
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

// wait is how long a changed status of key should wait before it is
// written: zero means write now.
func (p *statusPacer) wait(key types.NamespacedName, settled bool) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	if settled {
		delete(p.since, key)
		return 0
	}
	now := p.clock.Now()
	first, held := p.since[key]
	if !held {
		p.since[key] = now
		return p.interval
	}
	if elapsed := now.Sub(first); elapsed < p.interval {
		return p.interval - elapsed
	}
	p.since[key] = now
	return 0
}

// forget drops what the pacer holds for a Memcached that is gone.
func (p *statusPacer) forget(key types.NamespacedName) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.since, key)
}
