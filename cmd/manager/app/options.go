package app

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap/zapcore"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/client/config"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/example-inc/memcached-operator/certs"
	"github.com/example-inc/memcached-operator/certs/tlsprofile"
	"github.com/example-inc/memcached-operator/webhooks"
)

// options are the manager's flags and environment, read once at start.
type options struct {
	metricsAddr   string
	probeAddr     string
	pprofAddr     string
	secureMetrics bool
	enableHTTP2   bool
	leaderElect   bool
	// leaderElectionNamespace holds the Lease; in a pod it defaults to the
	// pod's namespace, outside one it must be given.
	leaderElectionNamespace string
	enableWebhooks          bool
	// networkPolicies: keep the NetworkPolicies of the manager's own pods
	// (package ingresspolicy).
	networkPolicies bool
	// Client-side limits of the manager's API client; client-go's defaults
	// (5 QPS) would make a thousand Memcached objects converge in minutes.
	kubeAPIQPS   float64
	kubeAPIBurst int
	workers      int
	// servedCertInterval is how often the pods of TLS Memcached objects
	// are asked which certificate they serve (package servedcert); 0: never.
	servedCertInterval time.Duration
	// warmupInterval is how often a rollout's new pod and its peers are
	// asked for their counters, to judge whether it is warm (package
	// controllers/warmup); 0: never, and no rollout waits for warmth.
	warmupInterval time.Duration
	webhookPort    int
	// shutdownDelay keeps the manager serving after SIGTERM (package
	// webhooks/drain); the Deployments set it, a process on a host needs none.
	shutdownDelay time.Duration
	sizePolicy    webhooks.SizePolicy

	// Serving certificates (package certs).
	webhookCertMode      certs.Mode
	webhookCertDir       string
	webhookManifestsPath string
	metricsCertPath      string
	// tlsOverrides win over the cluster's TLS profile (package
	// certs/tlsprofile) on the webhook and metrics servers.
	tlsOverrides tlsprofile.Overrides

	// From the environment, as OLM sets it.
	watchNamespaces []string
	memcachedImage  string
	// tlsReloaderImage is RELATED_IMAGE_TLS_RELOADER, the sidecar of pods
	// that serve TLS.
	tlsReloaderImage string
	// exporterImage is RELATED_IMAGE_MEMCACHED_EXPORTER, the metrics
	// exporter of monitored Memcached pods.
	exporterImage string
	// The manager's pod, from the downward API; empty outside a pod.
	podNamespace, podName string
	// olmCSV is the CSV that installed the operator (OLM sets
	// OPERATOR_CONDITION_NAME in every Deployment it makes); empty when
	// OLM did not.
	olmCSV string

	zap zap.Options
}

// parseOptions reads the options from args and the environment.
func parseOptions(args []string) (options, error) {
	o := options{sizePolicy: webhooks.DefaultSizePolicy(), servedCertInterval: 10 * time.Minute, warmupInterval: 5 * time.Second}
	if err := o.sizePolicyFromEnv(); err != nil {
		return o, err
	}
	for name, d := range map[string]*time.Duration{"SERVED_CERTIFICATE_INTERVAL": &o.servedCertInterval, "WARMUP_INTERVAL": &o.warmupInterval} {
		if err := durationFromEnv(name, d); err != nil {
			return o, err
		}
	}
	fs := flag.NewFlagSet("manager", flag.ContinueOnError)
	webhookCertMode, tlsFlags := o.bindFlags(fs)
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if err := o.sizePolicy.Validate(); err != nil {
		return o, err
	}
	var err error
	if o.webhookCertMode, err = certs.ParseMode(*webhookCertMode); err != nil {
		return o, fmt.Errorf("--webhook-cert-mode: %w", err)
	}
	if o.tlsOverrides, err = tlsprofile.ParseOverrides(tlsFlags.minVersion, tlsFlags.cipherSuites); err != nil {
		return o, fmt.Errorf("--tls-min-version=%q --tls-cipher-suites=%q: %w", tlsFlags.minVersion, tlsFlags.cipherSuites, err)
	}
	if o.shutdownDelay < 0 {
		return o, fmt.Errorf("--shutdown-delay=%s: must not be negative", o.shutdownDelay)
	}
	if o.servedCertInterval < 0 {
		return o, fmt.Errorf("--served-certificate-interval=%s: must not be negative", o.servedCertInterval)
	}
	if o.warmupInterval < 0 {
		return o, fmt.Errorf("--warmup-interval=%s: must not be negative", o.warmupInterval)
	}
	if o.metricsCertPath != "" && !o.secureMetrics {
		return o, errors.New("--metrics-cert-path needs --metrics-secure: plain HTTP metrics have no certificate")
	}
	o.watchNamespaces = parseWatchNamespaces(os.Getenv("WATCH_NAMESPACE"))
	o.memcachedImage = os.Getenv("RELATED_IMAGE_MEMCACHED")
	o.tlsReloaderImage = os.Getenv("RELATED_IMAGE_TLS_RELOADER")
	o.exporterImage = os.Getenv("RELATED_IMAGE_MEMCACHED_EXPORTER")
	o.podNamespace, o.podName = os.Getenv("POD_NAMESPACE"), os.Getenv("POD_NAME")
	o.olmCSV = os.Getenv("OPERATOR_CONDITION_NAME")
	return o, nil
}

// sizePolicyFromEnv reads the size policy's environment variables: under OLM
// a Subscription can set the operator's environment but not its arguments,
// so the policy can come from either, and a flag parsed after this wins.
func (o *options) sizePolicyFromEnv() error {
	for env, field := range map[string]*int32{
		"MEMCACHED_DEFAULT_SIZE": &o.sizePolicy.Default,
		"MEMCACHED_MIN_SIZE":     &o.sizePolicy.Min,
		"MEMCACHED_MAX_SIZE":     &o.sizePolicy.Max,
	} {
		if v, ok := os.LookupEnv(env); ok && v != "" {
			if err := (int32Flag{field}).Set(v); err != nil {
				return fmt.Errorf("%s=%q: %w", env, v, err)
			}
		}
	}
	return nil
}

// bindFlags defines the manager's flags on fs. It returns the flags that
// are parsed after fs: the webhook certificate mode and the TLS overrides.
func (o *options) bindFlags(fs *flag.FlagSet) (*string, *tlsFlags) {
	o.bindManagerFlags(fs)
	return o.bindServerFlags(fs), bindTLSFlags(fs)
}

// tlsFlags are the servers' TLS overrides as given, in kube-apiserver's
// names and forms.
type tlsFlags struct{ minVersion, cipherSuites string }

func bindTLSFlags(fs *flag.FlagSet) *tlsFlags {
	f := &tlsFlags{}
	fs.StringVar(&f.minVersion, "tls-min-version", "",
		"Minimum TLS version of the webhook and metrics servers: VersionTLS10, VersionTLS11, VersionTLS12 or VersionTLS13. "+
			"Empty: the cluster's TLS security profile (OpenShift's APIServer \"cluster\"), Intermediate (TLS 1.2) where there is none.")
	fs.StringVar(&f.cipherSuites, "tls-cipher-suites", "",
		"Comma-separated TLS 1.2 cipher suites of the webhook and metrics servers, by IANA name as Go names them "+
			"(e.g. TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256). Empty: the cluster's TLS security profile's. TLS 1.3 suites "+
			"cannot be chosen in Go: all three are always offered.")
	return f
}

// bindServerFlags defines the flags of the metrics, probe, profiler and
// webhook servers and their certificates.
func (o *options) bindServerFlags(fs *flag.FlagSet) *string {
	fs.StringVar(&o.metricsAddr, "metrics-bind-address", "0",
		"Address the metrics endpoint binds to, e.g. :8443 (HTTPS) or :8080 (HTTP); 0 disables it.")
	fs.StringVar(&o.probeAddr, "health-probe-bind-address", ":8081", "Address the health probe endpoint binds to.")
	fs.StringVar(&o.pprofAddr, "pprof-bind-address", "",
		"Address Go's profiler (/debug/pprof) binds to, e.g. 127.0.0.1:6060; empty disables it. It has no authentication: "+
			"for benchmarks and debugging only.")
	fs.BoolVar(&o.secureMetrics, "metrics-secure", true,
		"Serve metrics over HTTPS with authentication and authorization; false serves plain HTTP.")
	fs.BoolVar(&o.enableHTTP2, "enable-http2", false,
		"Enable HTTP/2 for the metrics and webhook servers (off: HTTP/2 Rapid Reset, CVE-2023-44487).")
	fs.IntVar(&o.webhookPort, "webhook-port", webhook.DefaultPort, "Port the webhook server listens on.")
	webhookCertMode := fs.String("webhook-cert-mode", string(certs.ModeMounted),
		"Where the webhook serving certificate comes from: \"mounted\" reads tls.crt and tls.key from --webhook-cert-dir "+
			"(cert-manager's Secret or OLM's mount) and reloads them when they change; \"local\" (make run) makes a CA and a "+
			"certificate for 127.0.0.1 and points the webhook configurations at this host.")
	fs.StringVar(&o.webhookCertDir, "webhook-cert-dir", "",
		"Directory of the webhook certificate (default "+certs.DefaultMountedDir+" when mounted; "+
			"<user cache dir>/memcached-operator/webhook-certs when local, where it is kept and reused).")
	fs.StringVar(&o.webhookManifestsPath, "webhook-manifests", certs.DefaultManifestsPath,
		"The generated webhook configurations that --webhook-cert-mode=local creates on the cluster.")
	fs.StringVar(&o.metricsCertPath, "metrics-cert-path", "",
		"Directory holding tls.crt and tls.key for the metrics endpoint, reloaded when they change; "+
			"empty: a self-signed certificate made at start.")
	return webhookCertMode
}

// bindManagerFlags defines the flags of leader election, the API client, the
// reconciler, the size policy, shutdown and logging.
func (o *options) bindManagerFlags(fs *flag.FlagSet) {
	fs.BoolVar(&o.leaderElect, "leader-elect", false,
		"Elect a leader so that only one replica of the manager reconciles at a time.")
	fs.StringVar(&o.leaderElectionNamespace, "leader-election-namespace", "",
		"Namespace of the leader election Lease; empty: the pod's own namespace (required outside a cluster).")
	fs.BoolVar(&o.enableWebhooks, "enable-webhooks", os.Getenv("ENABLE_WEBHOOKS") != "false",
		"Serve the admission webhooks (default from ENABLE_WEBHOOKS, on unless it is \"false\").")
	fs.BoolVar(&o.networkPolicies, "network-policies", os.Getenv("NETWORK_POLICIES") != "false",
		"Keep NetworkPolicies that admit into the manager's pods only its webhook and metrics ports, in a pod "+
			"(default from NETWORK_POLICIES, on unless it is \"false\").")
	fs.Var(int32Flag{&o.sizePolicy.Default}, "default-size",
		"spec.size given to a Memcached that sets none (default from MEMCACHED_DEFAULT_SIZE).")
	fs.Var(int32Flag{&o.sizePolicy.Min}, "min-size",
		"Smallest spec.size the validating webhook admits (default from MEMCACHED_MIN_SIZE).")
	fs.Var(int32Flag{&o.sizePolicy.Max}, "max-size",
		"Largest spec.size the validating webhook admits (default from MEMCACHED_MAX_SIZE).")
	fs.Float64Var(&o.kubeAPIQPS, "kube-api-qps", 50, "Queries per second the manager's API client may send.")
	fs.IntVar(&o.kubeAPIBurst, "kube-api-burst", 100, "Burst of queries above --kube-api-qps the client may send.")
	fs.IntVar(&o.workers, "max-concurrent-reconciles", 4, "Memcached objects reconciled in parallel.")
	fs.DurationVar(&o.servedCertInterval, "served-certificate-interval", o.servedCertInterval,
		"How often the pods of Memcached objects that serve TLS are asked which certificate they serve, to report one "+
			"near its end (CertificateExpiring); 0 turns the checks off (default from SERVED_CERTIFICATE_INTERVAL).")
	fs.DurationVar(&o.warmupInterval, "warmup-interval", o.warmupInterval,
		"How often a rollout's new memcached pod and its peers are asked for their counters, to judge whether it is warm "+
			"(spec.rollout); 0 asks no pod anything and lets every rollout go on as its pods answer (default from WARMUP_INTERVAL).")
	fs.DurationVar(&o.shutdownDelay, "shutdown-delay", 0,
		"How long the manager keeps serving after SIGTERM, with /readyz failing, before it stops: the time the "+
			"Service needs to stop sending admission calls to a pod that is going away (the Deployments set 5s).")
	// A stack trace tells a user nothing an error's message does not; keep
	// them for panics (--zap-stacktrace-level brings them back).
	o.zap.StacktraceLevel = zapcore.DPanicLevel
	o.zap.BindFlags(fs)
	ctrlconfig.RegisterFlags(fs) // --kubeconfig, read by ctrl.GetConfig
}

// parseWatchNamespaces reads WATCH_NAMESPACE as OLM sets it from the
// OperatorGroup's target namespaces: empty for all namespaces, else a comma
// separated list.
func parseWatchNamespaces(v string) []string {
	var out []string
	for _, ns := range strings.Split(v, ",") {
		if ns = strings.TrimSpace(ns); ns != "" {
			out = append(out, ns)
		}
	}
	return out
}

// webhookHost is where the webhook server listens: in local mode only the API
// server on this host calls it, so nothing else on the network should reach
// it; in a pod, the Service does.
func (o options) webhookHost() string {
	if o.webhookCertMode == certs.ModeLocal {
		return "127.0.0.1"
	}
	return ""
}

// int32Flag binds a flag to an int32 field, as the API's sizes are int32.
type int32Flag struct{ p *int32 }

func (f int32Flag) String() string {
	if f.p == nil {
		return "0"
	}
	return strconv.FormatInt(int64(*f.p), 10)
}

func (f int32Flag) Set(s string) error {
	v, err := strconv.ParseInt(s, 10, 32)
	if err != nil {
		return err
	}
	*f.p = int32(v)
	return nil
}

// durationFromEnv sets *d from the environment variable name, when set.
func durationFromEnv(name string, d *time.Duration) error {
	v := os.Getenv(name)
	if v == "" {
		return nil
	}
	parsed, err := time.ParseDuration(v)
	if err != nil {
		return fmt.Errorf("%s=%q: %w", name, v, err)
	}
	*d = parsed
	return nil
}
