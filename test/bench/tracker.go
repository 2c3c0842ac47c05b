package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
)

// tracker watches a set of objects and records when each converges to the
// size of the current phase. It watches rather than polls, so a thousand
// objects cost the API server one watch, and the times are those at which
// the change reached the bench.
type tracker struct {
	cache cache.Cache
	kind  tracked

	mu sync.Mutex
	// phase is the size being waited for; 0 when no phase is running.
	size      int32
	want      int
	converged map[string]time.Time
	done      chan struct{}
}

// tracked is a kind of object a tracker watches and what converged means
// for it.
type tracked struct {
	name      string
	object    client.Object
	list      client.ObjectList
	converged func(obj client.Object, size int32) bool
}

// memcacheds converge when their status says so: the operator's converge.
func memcacheds() tracked {
	return tracked{name: "Memcached objects", object: &cachev1.Memcached{}, list: &cachev1.MemcachedList{},
		converged: func(obj client.Object, size int32) bool { return memcachedConverged(obj.(*cachev1.Memcached), size) }}
}

// deployments converge when their controller reports every pod available:
// the floor's converge, with no operator to say so.
func deployments() tracked {
	return tracked{name: "Deployments", object: &appsv1.Deployment{}, list: &appsv1.DeploymentList{},
		converged: func(obj client.Object, size int32) bool { return deploymentAvailable(obj.(*appsv1.Deployment), size) }}
}

// startTracker starts an informer on the objects of kind in namespace ns of
// e's cluster.
func startTracker(ctx context.Context, e *env, ns string, kind tracked) (*tracker, error) {
	c, err := cache.New(e.cfg, cache.Options{
		Scheme:            e.scheme,
		DefaultNamespaces: map[string]cache.Config{ns: {}},
	})
	if err != nil {
		return nil, err
	}
	t := &tracker{cache: c, kind: kind}
	inf, err := c.GetInformer(ctx, kind.object)
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
		return nil, fmt.Errorf("the %s informer did not sync", kind.name)
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
	list := t.kind.list.DeepCopyObject().(client.ObjectList)
	if err := t.cache.List(ctx, list); err != nil {
		return err
	}
	return meta.EachListItem(list, func(obj runtime.Object) error {
		t.observe(obj)
		return nil
	})
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
	return fmt.Errorf("%d of %d %s converged to size %d within %s", len(t.converged), t.want, t.kind.name, t.size, timeout)
}

// times returns when each object converged, by name.
func (t *tracker) times() map[string]time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	return maps.Clone(t.converged)
}

func (t *tracker) observe(obj any) {
	o, ok := obj.(client.Object)
	if !ok {
		return
	}
	now := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.size == 0 || len(t.converged) >= t.want {
		return
	}
	if _, seen := t.converged[o.GetName()]; seen || !t.kind.converged(o, t.size) {
		return
	}
	t.converged[o.GetName()] = now
	if len(t.converged) == t.want {
		close(t.done)
	}
}

// memcachedConverged reports whether mc asks for size pods and its status,
// written for its current generation, says that many are ready and it is
// Available.
func memcachedConverged(mc *cachev1.Memcached, size int32) bool {
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

// deploymentAvailable reports whether d asks for size pods and its
// controller, having seen its current generation, reports that many updated
// and available.
func deploymentAvailable(d *appsv1.Deployment, size int32) bool {
	st := d.Status
	return d.Spec.Replicas != nil && *d.Spec.Replicas == size && st.ObservedGeneration >= d.Generation &&
		st.UpdatedReplicas == size && st.AvailableReplicas == size
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
