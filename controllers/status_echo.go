package controllers

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
)

// statusEchoes remembers the resourceVersion each Memcached's last status
// write came back with. The write returns as an update event of exactly that
// version, which would run a whole reconcile to find what the reconciler
// just wrote. Any other version, someone else's write or a later one, is
// reconciled as before. An entry lives until its echo arrives, the next
// write replaces it, or the Memcached is gone: one per Memcached at most.
type statusEchoes struct {
	mu sync.Mutex
	rv map[types.NamespacedName]string
}

func newStatusEchoes() *statusEchoes {
	return &statusEchoes{rv: map[types.NamespacedName]string{}}
}

// wrote records mc as the API server answered its status write.
func (s *statusEchoes) wrote(mc client.Object) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rv[client.ObjectKeyFromObject(mc)] = mc.GetResourceVersion()
}

// echo reports whether obj is the answer to the last status write, and
// forgets that write: its event comes once.
func (s *statusEchoes) echo(obj client.Object) bool {
	key := client.ObjectKeyFromObject(obj)
	s.mu.Lock()
	defer s.mu.Unlock()
	rv, ok := s.rv[key]
	if !ok || rv != obj.GetResourceVersion() {
		return false
	}
	delete(s.rv, key)
	return true
}

// forget drops what is remembered of mc: it is gone.
func (s *statusEchoes) forget(mc types.NamespacedName) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.rv, mc)
}

// filter passes every event but the update that echoes a status write.
func (s *statusEchoes) filter() predicate.Funcs {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool { return !s.echo(e.ObjectNew) }}
}
