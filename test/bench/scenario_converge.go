package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/google/pprof/profile"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
	"github.com/example-inc/memcached-operator/api/v1/gen"
)

// ownedObjects is what a Memcached of size 2 or more owns: a Deployment, a
// headless Service and a PodDisruptionBudget.
const ownedObjects = 3

// requestWorkers is how many creates or resizes the bench has in flight.
const requestWorkers = 16

// setName names the i-th object of the Memcached set.
func setName(i int) string { return fmt.Sprintf("mc-%05d", i) }

// converge creates the Memcached set and waits until every object is
// Available, measuring the operator from the first create until it is idle.
func (b *bench) converge(ctx context.Context) error {
	n := b.o.n
	cpu := startCPUProfile(ctx, b.op.pprofAddr)
	r, err := b.storm(ctx, b.o.size, "CREATE", func(ctx context.Context, name string) error {
		return b.e.client.Create(ctx, gen.Memcached(setNamespace, name, gen.WithSize(b.o.size)))
	})
	cpuProfile, cpuErr := cpu.stop()
	if err != nil {
		return err
	}
	r.OwnedObjects = ownedObjects
	if r.Profile, err = b.profiles(ctx, cpuProfile, cpuErr); err != nil {
		return fmt.Errorf("profiling the operator: %w", err)
	}
	b.res.Scenarios.Converge = r
	b.table.row(scenarioConverge, n, r.ConvergeSeconds, r.OperatorCPUSeconds, r.OperatorPeakRSSBytes, r.Writes.total(),
		fmt.Sprintf("writes/CR %.2f (%.2f without events; target <= %d); per CR p50 %.1fs p99 %.1fs",
			r.WritesPerObject, r.WritesPerObjectWithoutEvents, ownedObjects+extraWritesPerObject, r.PerObject.P50, r.PerObject.P99))
	return nil
}

// profiles sums up the CPU profile of the converge (which runs a slice
// past the settled operator) and the heap right after it.
func (b *bench) profiles(ctx context.Context, cpu *profile.Profile, cpuErr error) (*profileResult, error) {
	if cpuErr != nil {
		return nil, cpuErr
	}
	heap, err := heapProfile(ctx, b.op.pprofAddr)
	if err != nil {
		return nil, err
	}
	return summarize(cpu, heap, b.dir)
}

// resize sets every object's size to resizeTo at once and waits until every
// object is Available at the new size.
func (b *bench) resize(ctx context.Context) error {
	n := b.o.n
	patch := client.RawPatch(types.MergePatchType, fmt.Appendf(nil, `{"spec":{"size":%d}}`, b.o.resizeTo))
	r, err := b.storm(ctx, b.o.resizeTo, "UPDATE", func(ctx context.Context, name string) error {
		mc := &cachev1.Memcached{}
		mc.Namespace, mc.Name = setNamespace, name
		return b.e.client.Patch(ctx, mc, patch)
	})
	if err != nil {
		return err
	}
	r.FromSize = b.o.size
	b.res.Scenarios.Resize = r
	b.table.row(scenarioResize, n, r.ConvergeSeconds, r.OperatorCPUSeconds, r.OperatorPeakRSSBytes, r.Writes.total(),
		fmt.Sprintf("%d -> %d; writes/CR %.2f; per CR p50 %.1fs p99 %.1fs",
			b.o.size, b.o.resizeTo, r.WritesPerObject, r.PerObject.P50, r.PerObject.P99))
	return nil
}

// storm sends one request per object of the set, as fast as the bench's
// client allows, and measures until every object converged to size and the
// operator is idle again. operation is the requests' admission operation.
func (b *bench) storm(ctx context.Context, size int32, operation string, request func(context.Context, string) error) (*convergeResult, error) {
	n := b.o.n
	m0, err := b.op.metrics(ctx)
	if err != nil {
		return nil, err
	}
	api0, err := b.e.apiServerSnapshot(ctx)
	if err != nil {
		return nil, err
	}
	reconciles0 := m0.Sum("controller_runtime_reconcile_total", map[string]string{"controller": controllerName})
	u0, err := b.op.Usage()
	if err != nil {
		return nil, err
	}
	if err := b.track.begin(ctx, size, n); err != nil {
		return nil, err
	}

	t0 := time.Now()
	issued, err := sendAll(ctx, n, request)
	if err != nil {
		return nil, err
	}
	requestSeconds := time.Since(t0).Seconds()
	progress("sent %d requests in %.1fs; waiting for size %d everywhere", n, requestSeconds, size)
	if err := b.track.wait(ctx, b.o.waitTimeout); err != nil {
		return nil, err
	}
	api1, err := b.e.apiServerSnapshot(ctx)
	if err != nil {
		return nil, err
	}
	times := b.track.times()
	last := slices.MaxFunc(slices.Collect(maps.Values(times)), time.Time.Compare)
	settled, err := b.op.settle(ctx, int(reconciles0)+n, b.o.waitTimeout)
	if err != nil {
		return nil, err
	}
	b.settledAt = settled
	u1, err := b.op.Usage()
	if err != nil {
		return nil, err
	}
	m1, err := b.op.metrics(ctx)
	if err != nil {
		return nil, err
	}
	reqs, err := b.e.requests(ctx, t0, settled)
	if err != nil {
		return nil, err
	}
	writes := reqs.writes()
	admission, _ := admissionLatencies(api0.metrics, api1.metrics, operation)
	if len(admission) == 0 {
		return nil, fmt.Errorf("kube-apiserver recorded no webhook call of %s during the storm", operation)
	}
	podCreates := map[string]string{"verb": "POST", "resource": "pods"}
	pods := latencyOf("POST pods", "", histogramDelta(api0.metrics.histogram(apiServerRequestHistogram, podCreates),
		api1.metrics.histogram(apiServerRequestHistogram, podCreates)))
	return &convergeResult{
		Objects:                      n,
		ToSize:                       size,
		RequestSeconds:               requestSeconds,
		ConvergeSeconds:              last.Sub(t0).Seconds(),
		SettledSeconds:               settled.Sub(t0).Seconds(),
		PerObject:                    sampleQuantiles(latencies(issued, times)),
		OperatorCPUSeconds:           u1.CPUSeconds - u0.CPUSeconds,
		OperatorRSSBytes:             u1.RSSBytes,
		OperatorPeakRSSBytes:         u1.PeakRSSBytes,
		OperatorFileRSSBytes:         u1.FileRSSBytes,
		Reconciles:                   m1.Sum("controller_runtime_reconcile_total", map[string]string{"controller": controllerName}) - reconciles0,
		APIServerCPUSeconds:          api1.usage.CPUSeconds - api0.usage.CPUSeconds,
		Admission:                    admission,
		PodCreates:                   &pods,
		Requests:                     reqs,
		Writes:                       writes,
		WritesPerObject:              float64(writes.total()) / float64(n),
		WritesPerObjectWithoutEvents: float64(reqs.writes("events").total()) / float64(n),
		ConvergedAt:                  curve(t0, times),
		ClientRequestsByMethod: subtract(m1.clientRequestsByMethod(),
			m0.clientRequestsByMethod()),
	}, nil
}

// sendAll calls request for every object of the set with requestWorkers in
// parallel and returns when each request was sent.
func sendAll(ctx context.Context, n int, request func(context.Context, string) error) (map[string]time.Time, error) {
	names := make(chan string)
	var mu sync.Mutex
	issued := make(map[string]time.Time, n)
	var firstErr error
	var wg sync.WaitGroup
	for range requestWorkers {
		wg.Go(func() {
			for name := range names {
				at := time.Now()
				err := request(ctx, name)
				mu.Lock()
				issued[name] = at
				if err != nil && firstErr == nil {
					firstErr = fmt.Errorf("%s: %w", name, err)
				}
				mu.Unlock()
			}
		})
	}
	for i := range n {
		select {
		case names <- setName(i):
		case <-ctx.Done():
		}
	}
	close(names)
	wg.Wait()
	if firstErr == nil {
		firstErr = ctx.Err()
	}
	return issued, firstErr
}
