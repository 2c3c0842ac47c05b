package main

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/example-inc/memcached-operator/api/v1/gen"
)

// Metric names of the webhook scenario.
const (
	apiServerWebhookHistogram = "apiserver_admission_webhook_admission_duration_seconds"
	apiServerRequestHistogram = "apiserver_request_duration_seconds"
	handlerHistogram          = "controller_runtime_webhook_latency_seconds"
)

// webhookTarget is the bound on a webhook call's p99.
const webhookTarget = 0.005

// webhook is the webhook scenario (doc.go). The operator watches only the
// set's namespace, so that the objects it creates are admitted but never
// reconciled, and the latency is the webhooks' alone.
func (b *bench) webhook(ctx context.Context) error {
	// The set's operator would compete for the CPU; its replacement below
	// watches the same set.
	if err := b.op.stop(); err != nil {
		return err
	}
	b.op = nil

	baseline, baseErrs := b.createAtRate(ctx, baselineNamespace)
	if baseErrs > 0 {
		return fmt.Errorf("%d of %d creates failed without webhooks", baseErrs, len(baseline))
	}
	serialWithout, err := b.createSerially(ctx, baselineNamespace)
	if err != nil {
		return err
	}

	op, err := b.startOperator(ctx, true, setNamespace)
	if err != nil {
		return err
	}
	b.op = op
	if err := b.waitForWebhooks(ctx); err != nil {
		return err
	}
	existing := 0
	if b.res.Scenarios.Converge != nil {
		existing = b.o.n
	}
	if _, err := op.settle(ctx, existing, b.o.waitTimeout); err != nil {
		return err
	}

	api0, err := b.e.apiServerMetrics(ctx)
	if err != nil {
		return err
	}
	op0, err := op.read(ctx, false)
	if err != nil {
		return err
	}
	with, withErrs := b.createAtRate(ctx, webhookNamespace)
	op1, err := op.read(ctx, true)
	if err != nil {
		return err
	}
	api1, err := b.e.apiServerMetrics(ctx)
	if err != nil {
		return err
	}
	serialWith, err := b.createSerially(ctx, webhookNamespace)
	if err != nil {
		return err
	}

	r := &webhookResult{
		RatePerSecond:        b.o.webhookRate,
		DurationSeconds:      b.o.webhookDuration.Seconds(),
		Creates:              len(with),
		CreateErrors:         withErrs,
		BaselineCreates:      len(baseline),
		ClientWith:           sampleQuantiles(with),
		ClientWithout:        sampleQuantiles(baseline),
		SerialCreates:        b.o.n,
		SerialSecondsWith:    serialWith,
		SerialSecondsWithout: serialWithout,
		OperatorCPUSeconds:   op1.u.CPUSeconds - op0.u.CPUSeconds,
		OperatorRSSBytes:     op1.u.RSSBytes,
	}
	r.Webhooks, r.BucketBounds = admissionLatencies(api0, api1, "CREATE")
	if len(r.Webhooks) == 0 {
		return fmt.Errorf("kube-apiserver recorded no webhook call (%s of CREATE)", apiServerWebhookHistogram)
	}
	for _, path := range op1.m.labelValues(handlerHistogram, "webhook") {
		sel := map[string]string{"webhook": path}
		h := histogramDelta(op0.m.histogram(handlerHistogram, sel), op1.m.histogram(handlerHistogram, sel))
		if total(h) > 0 {
			r.Handler = append(r.Handler, latencyOf(path, "", h))
		}
	}
	b.res.Scenarios.Webhook = r
	worst := slowestWebhook(r.Webhooks)
	b.table.row(scenarioWebhook, r.Creates, r.DurationSeconds, r.OperatorCPUSeconds, r.OperatorRSSBytes, 0,
		fmt.Sprintf("%d/s; worst webhook %s p50 %.1fms p99 %.1fms (bucket <= %gms, %.1f%% <= 5ms); create p99 %.1fms with, %.1fms without",
			r.RatePerSecond, worst.Name, worst.P50*1e3, worst.P99*1e3, worst.P99Bucket*1e3, worst.Within5ms*100,
			r.ClientWith.P99*1e3, r.ClientWithout.P99*1e3))
	if withErrs > 0 {
		return fmt.Errorf("%d of %d creates failed with webhooks; see %s", withErrs, len(with), op.LogPath())
	}
	// Stopping the operator deletes its webhook configurations, so nothing
	// is left that would refuse creates once it is gone.
	err = b.op.stop()
	b.op = nil
	return err
}

// createSerially creates the set's number of Memcached in ns, each sent
// when the last was answered, and returns how long they took.
func (b *bench) createSerially(ctx context.Context, ns string) (float64, error) {
	start := time.Now()
	for i := range b.o.n {
		if err := b.e.client.Create(ctx, gen.Memcached(ns, fmt.Sprintf("serial-%05d", i), gen.WithSize(b.o.size))); err != nil {
			return 0, fmt.Errorf("creating Memcached %d of %d one after another in %s: %w", i+1, b.o.n, ns, err)
		}
	}
	return time.Since(start).Seconds(), nil
}

// admissionLatencies are kube-apiserver's webhook calls for operation
// between two scrapes of its metrics, by webhook, with the histogram's
// finite bucket bounds.
func admissionLatencies(before, after metrics, operation string) ([]webhookLatency, []float64) {
	var out []webhookLatency
	var bounds []float64
	types := after.labelValues(apiServerWebhookHistogram, "type")
	for _, name := range after.labelValues(apiServerWebhookHistogram, "name") {
		sel := map[string]string{"operation": operation, "name": name}
		h := histogramDelta(before.histogram(apiServerWebhookHistogram, sel), after.histogram(apiServerWebhookHistogram, sel))
		if total(h) == 0 {
			continue
		}
		out = append(out, latencyOf(name, webhookType(after, name, types), h))
		if bounds == nil {
			for _, bk := range h {
				if !math.IsInf(bk.le, 1) {
					bounds = append(bounds, bk.le)
				}
			}
		}
	}
	return out, bounds
}

// slowestWebhook is the webhook whose p99 is the worst: by the bucket that
// holds it, which is all the histogram asserts, then by the interpolation.
func slowestWebhook(hooks []webhookLatency) webhookLatency {
	return slices.MaxFunc(hooks, func(a, b webhookLatency) int {
		return cmp.Or(cmp.Compare(a.P99Bucket, b.P99Bucket), cmp.Compare(a.P99, b.P99))
	})
}

// webhookType is the type label (admit or validating) of a webhook's series.
func webhookType(m metrics, name string, types []string) string {
	for _, t := range types {
		if total(m.histogram(apiServerWebhookHistogram, map[string]string{"name": name, "type": t})) > 0 {
			return t
		}
	}
	return ""
}

func latencyOf(name, typ string, h []bucket) webhookLatency {
	p50, _ := quantile(0.5, h)
	p99, p99Bucket := quantile(0.99, h)
	return webhookLatency{
		Name: name, Type: typ, Calls: total(h),
		P50: p50, P99: p99, P99Bucket: p99Bucket,
		Within5ms: fractionAtMost(webhookTarget, h),
	}
}

// waitForWebhooks returns once kube-apiserver calls both webhooks: a
// dry-run create without a size comes back defaulted, and one with a size
// above the maximum is denied.
func (b *bench) waitForWebhooks(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	var last string
	err := wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(context.Context) (bool, error) {
		mc := gen.Memcached(webhookNamespace, "probe")
		if err := b.e.client.Create(ctx, mc, client.DryRunAll); err != nil {
			last = "defaulting: " + err.Error()
			return false, nil
		}
		if mc.Spec.Size == nil {
			last = "defaulting webhook not called yet"
			return false, nil
		}
		err := b.e.client.Create(ctx, gen.Memcached(webhookNamespace, "probe", gen.WithSize(100000)), client.DryRunAll)
		if err == nil {
			last = "validating webhook not called yet"
			return false, nil
		}
		if !apierrors.IsForbidden(err) && !apierrors.IsInvalid(err) {
			last = "validation: " + err.Error()
			return false, nil
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for kube-apiserver to call the webhooks (last: %s): %w", last, err)
	}
	return nil
}

// createAtRate creates Memcached objects in ns at -webhook-rate for
// -webhook-duration, each on its own goroutine so a slow create does not
// slow the rate, and returns their latencies (sorted, seconds) and how many
// failed.
func (b *bench) createAtRate(ctx context.Context, ns string) ([]float64, int) {
	n := int(b.o.webhookDuration.Seconds() * float64(b.o.webhookRate))
	interval := time.Second / time.Duration(b.o.webhookRate)
	var mu sync.Mutex
	var lat []float64
	failed := 0
	var wg sync.WaitGroup
	// The ticker sets the rate: this is the load, not a wait for a state.
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for i := range n {
		if i > 0 {
			select {
			case <-ticker.C:
			case <-ctx.Done():
				wg.Wait()
				return lat, failed + n - i
			}
		}
		wg.Go(func() {
			mc := gen.Memcached(ns, fmt.Sprintf("wh-%05d", i), gen.WithSize(b.o.size))
			start := time.Now()
			err := b.e.client.Create(ctx, mc)
			d := time.Since(start).Seconds()
			mu.Lock()
			defer mu.Unlock()
			lat = append(lat, d)
			if err != nil {
				failed++
			}
		})
	}
	wg.Wait()
	slices.Sort(lat)
	return lat, failed
}
