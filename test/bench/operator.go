package main

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/example-inc/memcached-operator/test/fixtures"
	"github.com/example-inc/memcached-operator/test/operatorproc"
)

// buildOperator compiles the operator from this tree into dir/manager.
func buildOperator(ctx context.Context, dir string) (string, error) {
	bin := filepath.Join(dir, "manager")
	return bin, operatorproc.Build(ctx, bin)
}

// hasFlag reports whether the operator binary knows a flag, from its -help.
func hasFlag(ctx context.Context, bin, flag string) (bool, error) {
	out, _ := exec.CommandContext(ctx, bin, "-help").CombinedOutput()
	if len(out) == 0 {
		return false, fmt.Errorf("%s -help printed nothing", bin)
	}
	return strings.Contains(string(out), "-"+flag+" "), nil
}

// operatorConfig is how one run of the operator is started.
type operatorConfig struct {
	bin        string
	kubeconfig string
	logPath    string
	// webhooks serves the admission webhooks, with --webhook-cert-mode=local
	// and its CA kept in webhookCertDir.
	webhooks       bool
	webhookCertDir string
	// watchNamespace is WATCH_NAMESPACE; empty watches every namespace.
	watchNamespace string
	extraArgs      []string
}

// operator is one running operator process.
type operator struct {
	*operatorproc.Process
	metricsURL  string
	webhookPort int
	// startedAt is just before the process started.
	startedAt time.Time
}

// startOperator starts the operator and waits until its readiness endpoint
// answers (with webhooks, until the webhook server is serving).
func startOperator(ctx context.Context, c operatorConfig) (*operator, error) {
	ports, err := operatorproc.FreePorts(3)
	if err != nil {
		return nil, err
	}
	metricsAddr := "127.0.0.1:" + strconv.Itoa(ports[0])
	probeAddr := "127.0.0.1:" + strconv.Itoa(ports[1])
	args := []string{
		"--metrics-bind-address=" + metricsAddr,
		"--metrics-secure=false",
		"--health-probe-bind-address=" + probeAddr,
		// A single replica needs no lease, and lease renewals would only
		// blur the idle write count.
		"--leader-elect=false",
		"--enable-webhooks=" + strconv.FormatBool(c.webhooks),
	}
	if c.webhooks {
		args = append(args,
			"--webhook-cert-mode=local",
			"--webhook-cert-dir="+c.webhookCertDir,
			"--webhook-manifests="+filepath.Join(fixtures.WebhookDir(), "manifests.yaml"),
			"--webhook-port="+strconv.Itoa(ports[2]),
		)
	}
	startedAt := time.Now()
	p, err := operatorproc.Start(operatorproc.Options{
		Binary:     c.bin,
		Kubeconfig: c.kubeconfig,
		LogPath:    c.logPath,
		Args:       append(args, c.extraArgs...),
		Env:        []string{"WATCH_NAMESPACE=" + c.watchNamespace},
	})
	if err != nil {
		return nil, err
	}
	op := &operator{Process: p, metricsURL: "http://" + metricsAddr + "/metrics", webhookPort: ports[2], startedAt: startedAt}
	readyCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if err := p.WaitHTTP(readyCtx, "http://"+probeAddr+"/readyz"); err != nil {
		return nil, errors.Join(fmt.Errorf("waiting for the operator to be ready: %w", err), op.stop())
	}
	return op, nil
}

// stop sends SIGTERM and gives the operator 30 seconds to exit (it deletes
// its local webhook configurations on the way out) before killing it.
func (op *operator) stop() error {
	if op == nil {
		return nil
	}
	return op.Stop(30 * time.Second)
}

// metrics scrapes the operator's metrics endpoint.
func (op *operator) metrics(ctx context.Context) (metrics, error) {
	body, err := operatorproc.Get(ctx, op.metricsURL)
	if err != nil {
		return nil, fmt.Errorf("scraping the operator's metrics: %w", err)
	}
	return parseMetrics(body)
}

// controllerName is the Memcached controller's name in the operator's
// metrics (its Named() in SetupWithManager).
const controllerName = "memcached"

// settleQuiet is how long the operator's reconcile count must stay still,
// with an empty queue and no busy worker, for the bench to call it settled.
const settleQuiet = 2 * time.Second

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
	err := poll(ctx, 200*time.Millisecond, func() (bool, error) {
		m, err := op.metrics(ctx)
		if err != nil {
			return false, err
		}
		count := m.sum("controller_runtime_reconcile_total", sel)
		depth := m.sum("workqueue_depth", map[string]string{"name": controllerName})
		active := m.sum("controller_runtime_active_workers", sel)
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

// poll calls cond every interval until it returns true or an error, or ctx
// ends.
func poll(ctx context.Context, interval time.Duration, cond func() (bool, error)) error {
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		ok, err := cond()
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ticker.C:
		}
	}
}
