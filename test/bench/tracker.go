package main

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
)

// tracker watches the Memcached set and records when each object converges
// to the size of the current phase. It watches rather than polls, so a
// thousand objects cost the API server one watch, and the times are those at
// which the status change reached the bench.
type tracker struct {
	cache cache.Cache

	mu sync.Mutex
	// phase is the size being waited for; 0 when no phase is running.
	size      int32
	want      int
	converged map[string]time.Time
	done      chan struct{}
}

// startTracker starts an informer on the Memcached objects of namespace ns.
func startTracker(ctx context.Context, e *env, ns string) (*tracker, error) {
	c, err := cache.New(e.cfg, cache.Options{
		Scheme:            e.scheme,
		DefaultNamespaces: map[string]cache.Config{ns: {}},
	})
	if err != nil {
		return nil, err
	}
	t := &tracker{cache: c}
	inf, err := c.GetInformer(ctx, &cachev1.Memcached{})
	if err != nil {
		return nil, err
	}
	if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    t.observe,
		UpdateFunc: func(_, obj any) { t.observe(obj) },
	}); err != nil {
		return nil, err
	}
	go func() { _ = c.Start(ctx) }()
	syncCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if !c.WaitForCacheSync(syncCtx) {
		return nil, fmt.Errorf("the Memcached informer did not sync")
	}
	return t, nil
}

// begin starts a phase: from now on, wait for want objects to converge to
// size. Objects that already have are counted at once.
func (t *tracker) begin(ctx context.Context, size int32, want int) error {
	t.mu.Lock()
	t.size, t.want = size, want
	t.converged = map[string]time.Time{}
	t.done = make(chan struct{})
	t.mu.Unlock()
	list := &cachev1.MemcachedList{}
	if err := t.cache.List(ctx, list); err != nil {
		return err
	}
	for i := range list.Items {
		t.observe(&list.Items[i])
	}
	return nil
}

// wait returns when every object of the phase has converged, or fails at
// the deadline with how many had.
func (t *tracker) wait(ctx context.Context, timeout time.Duration) error {
	t.mu.Lock()
	done := t.done
	t.mu.Unlock()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-done:
		return nil
	case <-timer.C:
	case <-ctx.Done():
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return fmt.Errorf("%d of %d Memcached objects converged to size %d within %s", len(t.converged), t.want, t.size, timeout)
}

// times returns when each object converged, by name.
func (t *tracker) times() map[string]time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make(map[string]time.Time, len(t.converged))
	for k, v := range t.converged {
		out[k] = v
	}
	return out
}

func (t *tracker) observe(obj any) {
	mc, ok := obj.(*cachev1.Memcached)
	if !ok {
		return
	}
	now := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.size == 0 || len(t.converged) >= t.want {
		return
	}
	if _, seen := t.converged[mc.Name]; seen || !converged(mc, t.size) {
		return
	}
	t.converged[mc.Name] = now
	if len(t.converged) == t.want {
		close(t.done)
	}
}

// converged reports whether mc asks for size pods and its status, written
// for its current generation, says that many are ready and it is Available.
func converged(mc *cachev1.Memcached, size int32) bool {
	if mc.Spec.Size == nil || *mc.Spec.Size != size {
		return false
	}
	st := mc.Status
	if st.ObservedGeneration != mc.Generation || st.ReadyReplicas != size {
		return false
	}
	c := meta.FindStatusCondition(st.Conditions, cachev1.ConditionAvailable)
	return c != nil && c.Status == metav1.ConditionTrue && c.ObservedGeneration == mc.Generation
}

// latencies are the seconds from each object's request (create or resize)
// to its convergence, sorted.
func latencies(issued, convergedAt map[string]time.Time) []float64 {
	out := make([]float64, 0, len(convergedAt))
	for name, at := range convergedAt {
		if start, ok := issued[name]; ok {
			out = append(out, at.Sub(start).Seconds())
		}
	}
	slices.Sort(out)
	return out
}

// curve is the number of objects converged against seconds since t0, one
// point per object, for the plot.
func curve(t0 time.Time, convergedAt map[string]time.Time) []float64 {
	out := make([]float64, 0, len(convergedAt))
	for _, at := range convergedAt {
		out = append(out, at.Sub(t0).Seconds())
	}
	slices.Sort(out)
	return out
}
