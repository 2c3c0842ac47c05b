package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/example-inc/memcached-operator/test/framework/operatorproc"
)

// operatorOptions say how startSecurityOperator runs one operator.
type operatorOptions struct {
	// name names the log file (<workDir>/<name>.log).
	name string
	// webhooks is local (the operator makes its certificate and writes
	// the webhook configurations) or mounted (it serves webhookCertDir's
	// certificate and writes nothing).
	webhooks operatorproc.Webhooks
	// webhookCertDir defaults to <workDir>/<name>-webhook-certs.
	webhookCertDir string
	// args are added to the flags every operator of the suite gets.
	args []string
}

// operatorLogs are the log files of every operator started, for
// checkOperatorLogs.
var operatorLogs struct {
	sync.Mutex
	paths []string
}

// startSecurityOperator starts the operator built for the suite as the operator's
// ServiceAccount, with secure metrics, leader election in the operator's
// namespace (as in a pod), the proxy settings in its environment and
// verbose logs (more log lines, more chances to leak), and waits until it
// is ready.
//
// GODEBUG=tls10server=1 makes Go's TLS servers accept TLS 1.0 and 1.1 again
// unless a server sets MinVersion itself: with it, the TLS specs prove the
// operator's own minimum, not Go's default.
func startSecurityOperator(ctx context.Context, o operatorOptions) (*operator, error) {
	if o.webhookCertDir == "" {
		o.webhookCertDir = filepath.Join(workDir, o.name+"-webhook-certs")
	}
	logPath := filepath.Join(workDir, o.name+".log")
	operatorLogs.Lock()
	operatorLogs.paths = append(operatorLogs.paths, logPath)
	operatorLogs.Unlock()
	op, err := operatorproc.Start(ctx, operatorproc.Options{
		Binary:                  operatorBinary,
		Kubeconfig:              operatorKubeconfig,
		LogPath:                 logPath,
		Webhooks:                o.webhooks,
		WebhookCertDir:          o.webhookCertDir,
		SecureMetrics:           true,
		LeaderElectionNamespace: operatorNamespace,
		Env:                     append(append(relatedImageEnv(), proxy.environ()...), "GODEBUG=tls10server=1"),
		ExtraArgs:               append([]string{"--zap-log-level=5"}, o.args...),
		ReadyTimeout:            readyTimeout,
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", o.name, err)
	}
	return &operator{Operator: op}, nil
}

// stop sends SIGTERM and allows 30 seconds (a local-mode operator deletes
// its webhook configurations on the way out).
func (op *operator) stop() error {
	return op.Stop(30 * time.Second)
}
