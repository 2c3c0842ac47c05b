package security

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/example-inc/memcached-operator/certs"
	"github.com/example-inc/memcached-operator/test/fixtures"
	"github.com/example-inc/memcached-operator/test/operatorproc"
)

// operatorOptions say how startOperator runs one operator.
type operatorOptions struct {
	// name names the log file (<workDir>/<name>.log).
	name string
	// webhookCertMode is local (the operator makes its certificate and
	// writes the webhook configurations) or mounted (it serves
	// webhookCertDir's certificate and writes nothing).
	webhookCertMode certs.Mode
	// webhookCertDir defaults to <workDir>/<name>-webhook-certs.
	webhookCertDir string
	// args are added to the flags every operator of the suite gets.
	args []string
}

// operator is one running operator process and where it serves.
type operator struct {
	*operatorproc.Process
	metricsAddr    string
	webhookAddr    string
	webhookCertDir string
}

// operatorLogs are the log files of every operator started, for
// checkOperatorLogs.
var operatorLogs struct {
	sync.Mutex
	paths []string
}

// startOperator starts the operator built for the suite as the operator's
// ServiceAccount, with secure metrics, leader election in the operator's
// namespace (as in a pod), the proxy settings in its environment and
// verbose logs (more log lines, more chances to leak), and waits until it
// is ready.
func startOperator(ctx context.Context, o operatorOptions) (*operator, error) {
	ports, err := operatorproc.FreePorts(3)
	if err != nil {
		return nil, err
	}
	loopback := func(port int) string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)) }
	if o.webhookCertDir == "" {
		o.webhookCertDir = filepath.Join(workDir, o.name+"-webhook-certs")
	}
	args := []string{
		"--metrics-bind-address=" + loopback(ports[0]),
		"--metrics-secure=true",
		"--health-probe-bind-address=" + loopback(ports[1]),
		"--webhook-port=" + strconv.Itoa(ports[2]),
		"--webhook-cert-mode=" + string(o.webhookCertMode),
		"--webhook-cert-dir=" + o.webhookCertDir,
		"--webhook-manifests=" + filepath.Join(fixtures.WebhookDir(), "manifests.yaml"),
		"--leader-elect=true",
		"--leader-election-namespace=" + operatorNamespace,
		"--zap-log-level=5",
	}
	logPath := filepath.Join(workDir, o.name+".log")
	p, err := operatorproc.Start(operatorproc.Options{
		Binary:     operatorBinary,
		Kubeconfig: operatorKubeconfig,
		LogPath:    logPath,
		Args:       append(args, o.args...),
		Env:        proxy.environ(),
	})
	if err != nil {
		return nil, err
	}
	operatorLogs.Lock()
	operatorLogs.paths = append(operatorLogs.paths, logPath)
	operatorLogs.Unlock()
	op := &operator{
		Process:        p,
		metricsAddr:    loopback(ports[0]),
		webhookAddr:    loopback(ports[2]),
		webhookCertDir: o.webhookCertDir,
	}
	readyCtx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	// readyz answers once the webhook server serves.
	if err := p.WaitHTTP(readyCtx, "http://"+loopback(ports[1])+"/readyz"); err != nil {
		return nil, errors.Join(fmt.Errorf("%s: %w", o.name, err), op.stop())
	}
	// The metrics server may open its port a moment after readyz answers.
	if err := wait.PollUntilContextCancel(readyCtx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", op.metricsAddr)
		if err != nil {
			return false, nil
		}
		return true, conn.Close()
	}); err != nil {
		return nil, errors.Join(fmt.Errorf("%s: metrics server at %s: %w", o.name, op.metricsAddr, err), op.stop())
	}
	return op, nil
}

// stop sends SIGTERM and allows 30 seconds (a local-mode operator deletes
// its webhook configurations on the way out).
func (op *operator) stop() error {
	return op.Stop(30 * time.Second)
}
