package metricsauth

import (
	"container/list"
	"sync"
	"time"
)

// maxEntries bounds a cache: a scraper or two need a handful of entries;
// anyone can send tokens, and each refused one is remembered too.
const maxEntries = 1024

// ttlCache remembers values until their expiry, at most maxEntries of them.
// An expired entry stays until its room is needed, so a caller can tell a
// key it has seen before from a new one.
type ttlCache[V any] struct {
	mu      sync.Mutex
	entries map[string]*list.Element
	// recent orders the entries from the most recently used (front) to
	// the least (back), which is evicted first once nothing has expired.
	recent *list.List
}

type ttlEntry[V any] struct {
	key     string
	value   V
	expires time.Time
}

func newTTLCache[V any]() *ttlCache[V] {
	return &ttlCache[V]{entries: map[string]*list.Element{}, recent: list.New()}
}

// get returns the value of key and whether it is still fresh by now; seen
// is false when key is not remembered at all, fresh or expired.
func (c *ttlCache[V]) get(key string, now time.Time) (value V, fresh, seen bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.entries[key]
	if !ok {
		return value, false, false
	}
	e := el.Value.(*ttlEntry[V])
	if !now.Before(e.expires) {
		return value, false, true
	}
	c.recent.MoveToFront(el)
	return e.value, true, true
}

// put remembers value under key for ttl from now. A full cache first drops
// what expired and, if that is not enough, the one entry used least
// recently: a flood of new keys pushes out other new keys, not the ones in
// steady use.
func (c *ttlCache[V]) put(key string, value V, now time.Time, ttl time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.entries[key]; ok {
		el.Value = &ttlEntry[V]{key: key, value: value, expires: now.Add(ttl)}
		c.recent.MoveToFront(el)
		return
	}
	if len(c.entries) >= maxEntries {
		c.dropExpired(now)
	}
	if len(c.entries) >= maxEntries {
		c.removeElement(c.recent.Back())
	}
	c.entries[key] = c.recent.PushFront(&ttlEntry[V]{key: key, value: value, expires: now.Add(ttl)})
}

// remove forgets key.
func (c *ttlCache[V]) remove(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.entries[key]; ok {
		c.removeElement(el)
	}
}

func (c *ttlCache[V]) dropExpired(now time.Time) {
	for el := c.recent.Front(); el != nil; {
		next := el.Next()
		if !now.Before(el.Value.(*ttlEntry[V]).expires) {
			c.removeElement(el)
		}
		el = next
	}
}

func (c *ttlCache[V]) removeElement(el *list.Element) {
	delete(c.entries, el.Value.(*ttlEntry[V]).key)
	c.recent.Remove(el)
}
