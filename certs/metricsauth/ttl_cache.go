package metricsauth

import (
	"sync"
	"time"
)

// maxEntries bounds a cache: a scraper or two need a handful of entries;
// anyone can send tokens, and each refused one is remembered too.
const maxEntries = 1024

// ttlCache remembers values until their expiry, at most maxEntries of them.
type ttlCache[V any] struct {
	mu      sync.Mutex
	entries map[string]ttlEntry[V]
}

type ttlEntry[V any] struct {
	value   V
	expires time.Time
}

func newTTLCache[V any]() *ttlCache[V] {
	return &ttlCache[V]{entries: map[string]ttlEntry[V]{}}
}

// get returns the value of key unless it expired by now.
func (c *ttlCache[V]) get(key string, now time.Time) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if !ok || !now.Before(e.expires) {
		var zero V
		return zero, false
	}
	return e.value, true
}

// put remembers value under key for ttl from now. A full cache first drops
// what expired and, if that is not enough, everything: the cost is a review
// per caller, once.
func (c *ttlCache[V]) put(key string, value V, now time.Time, ttl time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.entries[key]; !ok && len(c.entries) >= maxEntries {
		for k, e := range c.entries {
			if !now.Before(e.expires) {
				delete(c.entries, k)
			}
		}
		if len(c.entries) >= maxEntries {
			clear(c.entries)
		}
	}
	c.entries[key] = ttlEntry[V]{value: value, expires: now.Add(ttl)}
}
