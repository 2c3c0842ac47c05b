package main

import (
	"context"
	"fmt"
	"time"
)

// leaseResource is where leader election writes.
const leaseResource = "leases"

// idle counts the operator's writes over a window in which nothing changes:
// it starts when the operator went idle after the last scenario and lasts
// -idle. The target is no write beyond leader-election renewals.
func (b *bench) idle(ctx context.Context) error {
	start := b.settledAt
	end := start.Add(b.o.idle)
	r0, err := b.op.read(ctx, false)
	if err != nil {
		return err
	}
	// The window is the measurement: wait it out.
	if err := pause(ctx, time.Until(end)); err != nil {
		return err
	}
	r1, err := b.op.read(ctx, false)
	if err != nil {
		return err
	}
	reqs, err := b.e.requests(ctx, start, end)
	if err != nil {
		return err
	}
	writes := reqs.writes()
	r := &idleResult{
		WindowSeconds:          end.Sub(start).Seconds(),
		Requests:               reqs,
		Writes:                 writes,
		LeaseWrites:            writes.only(leaseResource).total(),
		OtherWrites:            writes.total() - writes.only(leaseResource).total(),
		Reconciles:             reconciles(r1.m) - reconciles(r0.m),
		ClientRequestsByMethod: subtract(r1.m.clientRequestsByMethod(), r0.m.clientRequestsByMethod()),
		OperatorCPUSeconds:     r1.u.CPUSeconds - r0.u.CPUSeconds,
		OperatorRSSBytes:       r1.u.RSSBytes,
	}
	b.res.Scenarios.Idle = r
	b.table.row(scenarioIdle, b.o.n, r.WindowSeconds, r.OperatorCPUSeconds, r.OperatorRSSBytes, writes.total(),
		fmt.Sprintf("%d writes besides leases (target 0), %d lease writes, %.0f reconciles", r.OtherWrites, r.LeaseWrites, r.Reconciles))
	return nil
}

func reconciles(m metrics) float64 {
	return m.Sum("controller_runtime_reconcile_total", map[string]string{"controller": controllerName})
}

// subtract is after - before, key by key, leaving out zeros.
func subtract(after, before map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for k, v := range after {
		if d := v - before[k]; d != 0 {
			out[k] = d
		}
	}
	return out
}
