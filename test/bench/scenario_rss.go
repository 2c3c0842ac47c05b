package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/example-inc/memcached-operator/api/v1/gen"
)

// unrelatedPerDeployment is the size of each Deployment of unrelated pods.
const unrelatedPerDeployment = 1000

// rss is the rss scenario (doc.go). Each measurement is a fresh start of
// the operator, so that both include the initial list of everything it
// caches.
func (b *bench) rss(ctx context.Context) error {
	without, err := b.measureRSS(ctx)
	if err != nil {
		return fmt.Errorf("without unrelated pods: %w", err)
	}
	t0 := time.Now()
	if err := b.createUnrelatedPods(ctx); err != nil {
		return err
	}
	podsReady := time.Since(t0).Seconds()
	progress("%d unrelated pods ready in %.0fs", b.o.unrelatedPods, podsReady)
	with, err := b.measureRSS(ctx)
	if err != nil {
		return fmt.Errorf("with %d unrelated pods: %w", b.o.unrelatedPods, err)
	}
	r := &rssResult{
		UnrelatedPods:    b.o.unrelatedPods,
		PodsReadySeconds: podsReady,
		WithoutPods:      without,
		WithPods:         with,
		PeakRatio:        ratio(with.PeakRSSBytes, without.PeakRSSBytes),
		SteadyRatio:      ratio(with.SteadyRSSBytes, without.SteadyRSSBytes),
		HeapRatio:        ratio(with.HeapInuseBytes, without.HeapInuseBytes),
		HeapGoalRatio:    ratio(with.HeapGoalBytes, without.HeapGoalBytes),
	}
	b.res.Scenarios.RSS = r
	b.table.row(scenarioRSS, b.o.n, with.StartupSeconds, with.StartupCPUSeconds, with.PeakRSSBytes, with.Writes,
		fmt.Sprintf("%d unrelated pods, median of %d starts: peak %.1f/%.1f MiB = %.3f, steady %.1f/%.1f MiB = %.3f (target <= 1.1), heap goal %.3f; restart writes %d/%d",
			b.o.unrelatedPods, b.o.rssRepeats, mib(with.PeakRSSBytes), mib(without.PeakRSSBytes), r.PeakRatio,
			mib(with.SteadyRSSBytes), mib(without.SteadyRSSBytes), r.SteadyRatio, r.HeapGoalRatio,
			without.Writes, with.Writes))
	return nil
}

// measureRSS starts the operator -rss-repeats times over the same cluster
// and summarises the runs by their medians: a Go process's RSS depends on
// where its garbage collector happens to be, so one start is noisy.
func (b *bench) measureRSS(ctx context.Context) (rssSummary, error) {
	var s rssSummary
	for range b.o.rssRepeats {
		run, err := b.restartAndMeasure(ctx)
		if err != nil {
			return s, err
		}
		s.Runs = append(s.Runs, run)
		s.Writes += run.Writes.writes().total()
	}
	med := func(f func(rssSample) float64) float64 {
		v := make([]float64, 0, len(s.Runs))
		for _, r := range s.Runs {
			v = append(v, f(r))
		}
		slices.Sort(v)
		return (v[(len(v)-1)/2] + v[len(v)/2]) / 2
	}
	s.PeakRSSBytes = int64(med(func(r rssSample) float64 { return float64(r.PeakRSSBytes) }))
	s.SteadyRSSBytes = int64(med(func(r rssSample) float64 { return float64(r.SteadyRSSBytes) }))
	s.HeapInuseBytes = int64(med(func(r rssSample) float64 { return float64(r.HeapInuseBytes) }))
	s.HeapGoalBytes = int64(med(func(r rssSample) float64 { return float64(r.HeapGoalBytes) }))
	s.StartupSeconds = med(func(r rssSample) float64 { return r.StartupSeconds })
	s.StartupCPUSeconds = med(func(r rssSample) float64 { return r.StartupCPUSeconds })
	return s, nil
}

// restartAndMeasure starts a new operator over the converged set, waits until
// it has reconciled every object and gone idle, then samples its RSS for
// -rss-window.
func (b *bench) restartAndMeasure(ctx context.Context) (rssSample, error) {
	if err := b.op.stop(); err != nil {
		return rssSample{}, err
	}
	op, err := b.startOperator(ctx, false, "")
	if err != nil {
		return rssSample{}, err
	}
	b.op = op
	settled, err := op.settle(ctx, b.o.n, b.o.waitTimeout)
	if err != nil {
		return rssSample{}, err
	}
	b.settledAt = settled
	u, err := op.Usage()
	if err != nil {
		return rssSample{}, err
	}
	s := rssSample{
		StartupSeconds:    settled.Sub(op.startedAt).Seconds(),
		StartupCPUSeconds: u.CPUSeconds,
		SteadyRSSBytes:    u.RSSBytes,
	}
	// Sampling on a ticker is the measurement; the window ends on a timer.
	window, cancel := context.WithTimeout(ctx, b.o.rssWindow)
	defer cancel()
	err = wait.PollUntilContextCancel(window, 250*time.Millisecond, true, func(context.Context) (bool, error) {
		u, err := op.Usage()
		s.SteadyRSSBytes = max(s.SteadyRSSBytes, u.RSSBytes)
		return false, err
	})
	if ctx.Err() != nil || !errors.Is(err, context.DeadlineExceeded) {
		return s, cmp.Or(ctx.Err(), err)
	}
	end := time.Now()
	u, err = op.Usage()
	if err != nil {
		return s, err
	}
	s.PeakRSSBytes = u.PeakRSSBytes
	m, err := op.metrics(ctx)
	if err != nil {
		return s, err
	}
	s.HeapInuseBytes = int64(m.Sum("go_memstats_heap_inuse_bytes", nil))
	s.HeapGoalBytes = int64(m.Sum("go_memstats_next_gc_bytes", nil))
	s.Reconciles = reconciles(m)
	reqs, err := b.e.requests(ctx, op.startedAt, end)
	if err != nil {
		return s, err
	}
	s.Writes = reqs.writes()
	return s, nil
}

// createUnrelatedPods adds -pods pods that are not the operator's (no
// managed-by label), as Deployments of pause pods that the scheduler places
// and kwok runs, and waits until they are all ready.
func (b *bench) createUnrelatedPods(ctx context.Context) error {
	remaining := b.o.unrelatedPods
	for i := 0; remaining > 0; i++ {
		replicas := min(remaining, unrelatedPerDeployment)
		remaining -= replicas
		if err := b.e.client.Create(ctx, gen.UnrelatedDeployment(unrelatedNamespace, fmt.Sprintf("unrelated-%02d", i), int32(replicas))); err != nil {
			return fmt.Errorf("creating unrelated pods: %w", err)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, b.o.waitTimeout)
	defer cancel()
	var ready int32
	err := wait.PollUntilContextCancel(ctx, time.Second, true, func(context.Context) (bool, error) {
		list := &appsv1.DeploymentList{}
		if err := b.e.client.List(ctx, list, client.InNamespace(unrelatedNamespace)); err != nil {
			return false, err
		}
		ready = 0
		for _, d := range list.Items {
			ready += d.Status.ReadyReplicas
		}
		return int(ready) >= b.o.unrelatedPods, nil
	})
	if err != nil {
		return fmt.Errorf("%d of %d unrelated pods ready: %w", ready, b.o.unrelatedPods, err)
	}
	return nil
}

// ratio is a / b, or 0 when b is (JSON has no infinity).
func ratio(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}
