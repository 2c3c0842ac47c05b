package operatorproc

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/example-inc/memcached-operator/certs"
	"github.com/example-inc/memcached-operator/hack/repo"
)

// Webhooks says whether and how the operator serves its admission webhooks.
type Webhooks string

const (
	// WebhooksOff runs the operator with --enable-webhooks=false.
	WebhooksOff Webhooks = "off"
	// WebhooksLocal is make run's mode: the operator makes a CA and a
	// certificate in WebhookCertDir and points the cluster's webhook
	// configurations at itself on 127.0.0.1.
	WebhooksLocal Webhooks = Webhooks(certs.ModeLocal)
	// WebhooksMounted serves tls.crt and tls.key from WebhookCertDir, as
	// in a pod with cert-manager's or OLM's Secret mounted; the webhook
	// configurations are the installer's business.
	WebhooksMounted Webhooks = Webhooks(certs.ModeMounted)
)

// Options say how one operator is run. Binary, Kubeconfig, LogPath and
// Webhooks are required.
type Options struct {
	// Binary is the manager, from Build.
	Binary string
	// Kubeconfig is passed as KUBECONFIG.
	Kubeconfig string
	// LogPath receives the output, appended, so that restarts share a log.
	LogPath string

	// Webhooks is the webhook mode.
	Webhooks Webhooks
	// WebhookCertDir is --webhook-cert-dir (local and mounted modes).
	WebhookCertDir string

	// SecureMetrics serves /metrics over HTTPS with authentication and
	// authorization, as in a cluster; otherwise plain HTTP, which a test
	// reads with Metrics.
	SecureMetrics bool
	// MetricsCertDir is --metrics-cert-path (SecureMetrics only); empty:
	// a self-signed certificate.
	MetricsCertDir string

	// LeaderElectionNamespace turns leader election on, with the Lease in
	// that namespace; empty: off.
	LeaderElectionNamespace string

	// WatchNamespace is WATCH_NAMESPACE: empty watches every namespace.
	WatchNamespace string
	// Env adds variables (NAME=value), after WatchNamespace.
	Env []string

	// Args come first on the command line (a container's own arguments,
	// say); the flags the options above make follow them and win.
	Args []string
	// ExtraArgs come last of all, to override anything (a log level).
	ExtraArgs []string

	// ReadyTimeout bounds Start's wait for readiness. Defaults to two
	// minutes, for a loaded two-core machine.
	ReadyTimeout time.Duration
}

// Ports are where one operator listens, all on 127.0.0.1.
type Ports struct {
	Probe, Metrics, Webhook int
}

// args is the operator's command line for o on ports.
func (o Options) args(p Ports) []string {
	args := append([]string{}, o.Args...)
	args = append(args,
		"--health-probe-bind-address="+loopbackAddr(p.Probe),
		"--metrics-bind-address="+loopbackAddr(p.Metrics),
		"--metrics-secure="+strconv.FormatBool(o.SecureMetrics),
	)
	if o.MetricsCertDir != "" {
		args = append(args, "--metrics-cert-path="+o.MetricsCertDir)
	}
	if o.Webhooks == WebhooksOff {
		args = append(args, "--enable-webhooks=false")
	} else {
		args = append(args, "--enable-webhooks=true",
			"--webhook-cert-mode="+string(o.Webhooks),
			"--webhook-cert-dir="+o.WebhookCertDir,
			"--webhook-port="+strconv.Itoa(p.Webhook))
		if o.Webhooks == WebhooksLocal {
			args = append(args, "--webhook-manifests="+filepath.Join(repo.WebhookDir(), "manifests.yaml"))
		}
	}
	if o.LeaderElectionNamespace != "" {
		args = append(args, "--leader-elect=true", "--leader-election-namespace="+o.LeaderElectionNamespace)
	} else {
		args = append(args, "--leader-elect=false")
	}
	return append(args, o.ExtraArgs...)
}

// operatorVariables are the environment variables that change what the
// operator does; only Options set them.
var operatorVariables = map[string]bool{
	"KUBECONFIG": true, "WATCH_NAMESPACE": true, "ENABLE_WEBHOOKS": true,
	"RELATED_IMAGE_MEMCACHED": true, "RELATED_IMAGE_TLS_RELOADER": true,
	"RELATED_IMAGE_MEMCACHED_EXPORTER": true, "MEMCACHED_DEFAULT_SIZE": true,
	"MEMCACHED_MIN_SIZE": true, "MEMCACHED_MAX_SIZE": true,
	"HTTP_PROXY": true, "HTTPS_PROXY": true, "NO_PROXY": true,
	"http_proxy": true, "https_proxy": true, "no_proxy": true,
	"POD_NAME": true, "POD_NAMESPACE": true, "OPERATOR_CONDITION_NAME": true,
	"MEMORY_LIMIT": true, "GOMEMLIMIT": true, "GOGC": true, "GOMAXPROCS": true,
	"NETWORK_POLICIES": true, "SERVED_CERTIFICATE_INTERVAL": true, "WARMUP_INTERVAL": true,
	// fips140=only in a developer's shell would fail the operator where a
	// pod would not (docs/fips.md).
	"GODEBUG": true,
}

// environ is the test's environment without the operator's variables, then
// the ones o gives. (exec uses the last of duplicate names.)
func (o Options) environ() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !operatorVariables[name] {
			env = append(env, kv)
		}
	}
	env = append(env, "KUBECONFIG="+o.Kubeconfig, "WATCH_NAMESPACE="+o.WatchNamespace)
	return append(env, o.Env...)
}
