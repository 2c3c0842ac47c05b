package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/example-inc/memcached-operator/certs/certstest"
	"github.com/example-inc/memcached-operator/hack/local-cluster/process"
	"github.com/example-inc/memcached-operator/test/framework/operatorproc"
)

// operator is one run of the operator, from the launcher.
type operator struct {
	*operatorproc.Operator
	// startedAt is just before the process started.
	startedAt time.Time
	// pprofAddr is its profiler's host:port.
	pprofAddr string
}

// startOperator starts the operator built for the bench, as a user of its
// own, with plain-HTTP metrics, and returns once it is ready. With webhooks
// it serves them in local mode.
func (b *bench) startOperator(ctx context.Context, webhooks bool, watchNamespace string) (*operator, error) {
	mode := operatorproc.WebhooksOff
	if webhooks {
		mode = operatorproc.WebhooksLocal
	}
	ports, err := certstest.FreePorts(1)
	if err != nil {
		return nil, err
	}
	pprofAddr := "127.0.0.1:" + strconv.Itoa(ports[0])
	startedAt := time.Now()
	op, err := operatorproc.Start(ctx, operatorproc.Options{
		Binary:         b.bin,
		Kubeconfig:     b.e.operatorKubeconfig,
		LogPath:        filepath.Join(b.dir, "operator.log"),
		Webhooks:       mode,
		WebhookCertDir: filepath.Join(b.dir, "webhook-certs"),
		WatchNamespace: watchNamespace,
		Env:            b.deployedEnv,
		// A single replica needs no lease, and lease renewals would only
		// blur the idle write count: LeaderElectionNamespace stays empty.
		// Its Memcached's pods are kwok's, whose addresses nothing
		// answers: no rollout may wait to read their counters.
		ExtraArgs: append([]string{"--pprof-bind-address=" + pprofAddr, "--warmup-interval=0"}, b.o.operatorArgs...),
	})
	if err != nil {
		return nil, fmt.Errorf("starting the operator: %w", err)
	}
	return &operator{Operator: op, startedAt: startedAt, pprofAddr: pprofAddr}, nil
}

// stop sends SIGTERM and gives the operator 30 seconds to exit (it deletes
// its local webhook configurations on the way out) before killing it.
func (op *operator) stop() error {
	if op == nil {
		return nil
	}
	return op.Stop(30 * time.Second)
}

// reading is the operator's metrics and its process's usage at one moment.
type reading struct {
	m metrics
	u process.Usage
}

// read reads the operator's metrics, then its usage; at a window's end it
// reads the usage first, so that the scrape's CPU falls outside the window.
func (op *operator) read(ctx context.Context, end bool) (r reading, err error) {
	usage := func() (err error) { r.u, err = op.Usage(); return err }
	scrape := func() (err error) { r.m, err = op.metrics(ctx); return err }
	if end {
		err = errors.Join(usage(), scrape())
	} else {
		err = errors.Join(scrape(), usage())
	}
	return r, err
}

func (op *operator) metrics(ctx context.Context) (metrics, error) {
	body, err := op.Metrics(ctx)
	if err != nil {
		return metrics{}, fmt.Errorf("scraping the operator's metrics: %w", err)
	}
	return parseMetrics(body)
}

// controllerName is the Memcached controller's name in the operator's
// metrics (its Named() in SetupWithManager).
const controllerName = "memcached"

// settleQuiet is how long the operator's reconcile count must stay still,
// with an empty queue and no busy worker, for the bench to call it settled.
const settleQuiet = 2 * time.Second

// settlePoll is how often settle scrapes the operator's metrics: each
// scrape costs the operator it measures an encoding of every series, so
// no more than once a second.
const settlePoll = time.Second

// settle waits until the operator has run at least minReconciles reconciles
// since it started and then stayed idle for settleQuiet: nothing queued, no
// worker busy, no new reconcile. It returns when it saw that, which is where
// the bench ends one measurement window and starts the next.
func (op *operator) settle(ctx context.Context, minReconciles int, timeout time.Duration) (time.Time, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	sel := map[string]string{"controller": controllerName}
	var lastCount float64 = -1
	var quietSince time.Time
	var last string
	err := wait.PollUntilContextCancel(ctx, settlePoll, true, func(context.Context) (bool, error) {
		m, err := op.metrics(ctx)
		if err != nil {
			return false, err
		}
		count := m.Sum("controller_runtime_reconcile_total", sel)
		depth := m.Sum("workqueue_depth", map[string]string{"name": controllerName})
		active := m.Sum("controller_runtime_active_workers", sel)
		last = fmt.Sprintf("%.0f reconciles, queue depth %.0f, %.0f busy workers", count, depth, active)
		now := time.Now()
		if count != lastCount || depth > 0 || active > 0 || count < float64(minReconciles) {
			lastCount, quietSince = count, now
			return false, nil
		}
		return now.Sub(quietSince) >= settleQuiet, nil
	})
	if err != nil {
		return time.Time{}, fmt.Errorf("waiting for the operator to settle (last: %s): %w", last, err)
	}
	return time.Now(), nil
}
