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

// storm sends one request per object of the set and measures until every
// object converged to size and the operator is idle again. operation is
// the requests' admission operation.
func (b *bench) storm(ctx context.Context, size int32, operation string, request func(context.Context, string) error) (*convergeResult, error) {
	n := b.o.n
	r0, err := b.op.read(ctx, false)
	if err != nil {
		return nil, err
	}
	w, err := b.wave(ctx, b.e, b.track, size, request, func(requestSeconds float64) {
		progress("sent %d requests in %.1fs; waiting for size %d everywhere", n, requestSeconds, size)
	})
	if err != nil {
		return nil, err
	}
	settled, err := b.op.settle(ctx, int(reconciles(r0.m))+n, b.o.waitTimeout)
	if err != nil {
		return nil, err
	}
	b.settledAt = settled
	r1, err := b.op.read(ctx, true)
	if err != nil {
		return nil, err
	}
	reqs, err := b.e.requests(ctx, w.t0, settled)
	if err != nil {
		return nil, err
	}
	writes := reqs.writes()
	admission, _ := admissionLatencies(w.api0.metrics, w.api1.metrics, operation)
	if len(admission) == 0 {
		return nil, fmt.Errorf("kube-apiserver recorded no webhook call of %s during the storm", operation)
	}
	podCreates := map[string]string{"verb": "POST", "resource": "pods"}
	pods := latencyOf("POST pods", "", histogramDelta(w.api0.metrics.histogram(apiServerRequestHistogram, podCreates),
		w.api1.metrics.histogram(apiServerRequestHistogram, podCreates)))
	return &convergeResult{
		Objects:                      n,
		ToSize:                       size,
		RequestSeconds:               w.requestSeconds,
		ConvergeSeconds:              w.convergeSeconds(),
		SettledSeconds:               settled.Sub(w.t0).Seconds(),
		PerObject:                    w.perObject(),
		OperatorCPUSeconds:           r1.u.CPUSeconds - r0.u.CPUSeconds,
		OperatorRSSBytes:             r1.u.RSSBytes,
		OperatorPeakRSSBytes:         r1.u.PeakRSSBytes,
		OperatorFileRSSBytes:         r1.u.FileRSSBytes,
		Reconciles:                   reconciles(r1.m) - reconciles(r0.m),
		APIServerCPUSeconds:          w.apiServerCPU(),
		Admission:                    admission,
		PodCreates:                   &pods,
		Requests:                     reqs,
		Writes:                       writes,
		WritesPerObject:              float64(writes.total()) / float64(n),
		WritesPerObjectWithoutEvents: float64(reqs.writes("events").total()) / float64(n),
		ConvergedAt:                  curve(w.t0, w.times),
		ClientRequestsByMethod:       subtract(r1.m.clientRequestsByMethod(), r0.m.clientRequestsByMethod()),
	}, nil
}

// waveResult is a wave of requests: when it started, how long sending
// took, when each request went and each object converged, and
// kube-apiserver before and after.
type waveResult struct {
	t0             time.Time
	requestSeconds float64
	issued, times  map[string]time.Time
	api0, api1     apiServerSnapshot
}

// wave sends one request per object of the set, as fast as the bench's
// client allows, tells sent how long that took, and waits until track saw
// every object converge to size: the floor's applies and the operator's
// storms alike.
func (b *bench) wave(ctx context.Context, e *env, track *tracker, size int32, request func(context.Context, string) error, sent func(requestSeconds float64)) (*waveResult, error) {
	if err := track.begin(ctx, size, b.o.n); err != nil {
		return nil, err
	}
	w := &waveResult{}
	var err error
	if w.api0, err = e.apiServerSnapshot(ctx); err != nil {
		return nil, err
	}
	w.t0 = time.Now()
	if w.issued, err = sendAll(ctx, b.o.n, request); err != nil {
		return nil, err
	}
	w.requestSeconds = time.Since(w.t0).Seconds()
	sent(w.requestSeconds)
	if err := track.wait(ctx, b.o.waitTimeout); err != nil {
		return nil, err
	}
	if w.api1, err = e.apiServerSnapshot(ctx); err != nil {
		return nil, err
	}
	w.times = track.times()
	return w, nil
}

// convergeSeconds is from the first request to the last object converged.
func (w *waveResult) convergeSeconds() float64 {
	return slices.MaxFunc(slices.Collect(maps.Values(w.times)), time.Time.Compare).Sub(w.t0).Seconds()
}

func (w *waveResult) perObject() quantiles { return sampleQuantiles(latencies(w.issued, w.times)) }

func (w *waveResult) apiServerCPU() float64 {
	return w.api1.usage.CPUSeconds - w.api0.usage.CPUSeconds
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
