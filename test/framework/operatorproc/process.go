package operatorproc

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/example-inc/memcached-operator/certs/certstest"
	"github.com/example-inc/memcached-operator/hack/local-cluster/gobuild"
	"github.com/example-inc/memcached-operator/hack/local-cluster/process"
	"github.com/example-inc/memcached-operator/hack/repo"
)

// Build compiles the manager (the module's main package) to path, as the
// Dockerfile does (static, with the Go Cryptographic Module GOFIPS140, so it
// runs in FIPS 140-3 mode): the binary of the operator image the real node
// runs, built from the same compiled packages. It returns path.
func Build(ctx context.Context, path string) (string, error) {
	if err := gobuild.Module(ctx, path, "."); err != nil {
		return "", fmt.Errorf("the operator: %w", err)
	}
	return path, nil
}

// Operator is one running operator. Its ports stay the same across
// Restart, as a pod's do across container restarts.
type Operator struct {
	*process.Process
	opts  Options
	ports Ports
}

// Start starts the operator on free ports and returns once it is ready:
// /readyz answers (with webhooks, the server serves its certificate and, in
// local mode, the webhook configurations point at it) and the metrics port
// accepts connections. On failure nothing is left running.
func Start(ctx context.Context, opts Options) (*Operator, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	if opts.ReadyTimeout == 0 {
		opts.ReadyTimeout = 2 * time.Minute
	}
	ps, err := certstest.FreePorts(3)
	if err != nil {
		return nil, err
	}
	o := &Operator{opts: opts, ports: Ports{Probe: ps[0], Metrics: ps[1], Webhook: ps[2]}}
	return o, o.start(ctx)
}

func (o Options) validate() error {
	var errs []error
	for name, v := range map[string]string{"Binary": o.Binary, "Kubeconfig": o.Kubeconfig, "LogPath": o.LogPath} {
		if v == "" {
			errs = append(errs, fmt.Errorf("option %s is empty", name))
		}
	}
	switch o.Webhooks {
	case WebhooksOff:
	case WebhooksLocal, WebhooksMounted:
		if o.WebhookCertDir == "" {
			errs = append(errs, fmt.Errorf("webhooks %s need Options.WebhookCertDir", o.Webhooks))
		}
	default:
		errs = append(errs, fmt.Errorf("Options.Webhooks %q: want %q, %q or %q", o.Webhooks, WebhooksOff, WebhooksLocal, WebhooksMounted))
	}
	if o.MetricsCertDir != "" && !o.SecureMetrics {
		errs = append(errs, errors.New("Options.MetricsCertDir needs SecureMetrics"))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("operatorproc: %w", err)
	}
	return nil
}

func (o *Operator) start(ctx context.Context) error {
	p, err := process.Start(process.Spec{
		Path: o.opts.Binary, Args: o.opts.args(o.ports), Env: o.opts.environ(),
		// Relative paths in Args (config/webhook) resolve as under make.
		Dir: repo.Root(), LogPath: o.opts.LogPath,
	})
	if err != nil {
		return err
	}
	o.Process = p
	ctx, cancel := context.WithTimeout(ctx, o.opts.ReadyTimeout)
	defer cancel()
	err = p.WaitFor(ctx, "/readyz", process.HTTPOK(o.ProbeURL()+"/readyz"))
	if err == nil {
		// The metrics server may open its port a moment after /readyz.
		err = p.WaitFor(ctx, "the metrics port", func(ctx context.Context) error {
			conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", o.MetricsAddr())
			if err != nil {
				return err
			}
			return conn.Close()
		})
	}
	if err != nil {
		return errors.Join(err, p.Kill())
	}
	return nil
}

// Restart starts a stopped or killed operator again with the same options,
// ports and log, as kubelet restarts a container, and waits until it is
// ready.
func (o *Operator) Restart(ctx context.Context) error {
	if o.Running() {
		return errors.New("operatorproc: Restart is for an operator that has exited")
	}
	return o.start(ctx)
}

// Stop sends SIGTERM, as kubelet does, and fails if the operator needs more
// than timeout to exit (a local-mode operator deletes its webhook
// configurations on the way out). Safe on a nil or stopped Operator.
func (o *Operator) Stop(timeout time.Duration) error {
	if o == nil || o.Process == nil {
		return nil
	}
	return o.Process.Stop(timeout)
}

// Ports are where the operator listens.
func (o *Operator) Ports() Ports { return o.ports }

// Options are what the operator was started with.
func (o *Operator) Options() Options { return o.opts }

// ProbeURL is the base URL of /healthz and /readyz.
func (o *Operator) ProbeURL() string { return "http://" + loopbackAddr(o.ports.Probe) }

// MetricsAddr is the metrics server's host:port.
func (o *Operator) MetricsAddr() string { return loopbackAddr(o.ports.Metrics) }

// MetricsURL is the /metrics URL, https with SecureMetrics.
func (o *Operator) MetricsURL() string {
	scheme := "http"
	if o.opts.SecureMetrics {
		scheme = "https"
	}
	return scheme + "://" + o.MetricsAddr() + "/metrics"
}

// WebhookAddr is the webhook server's host:port.
func (o *Operator) WebhookAddr() string { return loopbackAddr(o.ports.Webhook) }

// Metrics reads /metrics in the Prometheus text format; for plain-HTTP
// metrics only (SecureMetrics false).
func (o *Operator) Metrics(ctx context.Context) (string, error) {
	if o.opts.SecureMetrics {
		return "", errors.New("operatorproc: Metrics reads plain-HTTP metrics; this operator serves them over HTTPS")
	}
	return process.Get(ctx, o.MetricsURL())
}

func loopbackAddr(port int) string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)) }
