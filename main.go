// Command manager runs the memcached-operator: the Memcached reconciler and
// its admission webhooks.
package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"syscall"
	"time"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	"go.uber.org/zap/zapcore"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/discovery"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/client/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
	"github.com/example-inc/memcached-operator/certs"
	"github.com/example-inc/memcached-operator/controllers"
	"github.com/example-inc/memcached-operator/certs/metricsauth"
	"github.com/example-inc/memcached-operator/controllers/proxyenv"
	"github.com/example-inc/memcached-operator/controllers/subscriptionconfig"
	"github.com/example-inc/memcached-operator/webhooks"
	"github.com/example-inc/memcached-operator/webhooks/drain"
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
	// Client-side limits of the manager's API client; client-go's defaults
	// (5 QPS) would make a thousand Memcached objects converge in minutes.
	kubeAPIQPS   float64
	kubeAPIBurst int
	workers      int
	webhookPort  int
	// shutdownDelay keeps the manager serving after SIGTERM (package
	// webhooks/drain); the Deployments set it, a process on a host needs none.
	shutdownDelay time.Duration
	sizePolicy    webhooks.SizePolicy

	// Serving certificates (package certs).
	webhookCertMode      certs.Mode
	webhookCertDir       string
	webhookManifestsPath string
	metricsCertPath      string

	// From the environment, as OLM sets it.
	watchNamespaces []string
	memcachedImage  string
	// The manager's pod, from the downward API; empty outside a pod.
	podNamespace, podName string
	// olmCSV is the CSV that installed the operator (OLM sets
	// OPERATOR_CONDITION_NAME in every Deployment it makes); empty when
	// OLM did not.
	olmCSV string

	zap zap.Options
}

func parseOptions(args []string) (options, error) {
	o := options{sizePolicy: webhooks.DefaultSizePolicy()}
	// Under OLM a Subscription can set the operator's environment but not its
	// arguments, so the size policy can come from either; a flag wins.
	for env, field := range map[string]*int32{
		"MEMCACHED_DEFAULT_SIZE": &o.sizePolicy.Default,
		"MEMCACHED_MIN_SIZE":     &o.sizePolicy.Min,
		"MEMCACHED_MAX_SIZE":     &o.sizePolicy.Max,
	} {
		if v, ok := os.LookupEnv(env); ok && v != "" {
			if err := (int32Flag{field}).Set(v); err != nil {
				return o, fmt.Errorf("%s=%q: %w", env, v, err)
			}
		}
	}
	fs := flag.NewFlagSet("manager", flag.ContinueOnError)
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
	fs.BoolVar(&o.leaderElect, "leader-elect", false,
		"Elect a leader so that only one replica of the manager reconciles at a time.")
	fs.StringVar(&o.leaderElectionNamespace, "leader-election-namespace", "",
		"Namespace of the leader election Lease; empty: the pod's own namespace (required outside a cluster).")
	fs.BoolVar(&o.enableWebhooks, "enable-webhooks", os.Getenv("ENABLE_WEBHOOKS") != "false",
		"Serve the admission webhooks (default from ENABLE_WEBHOOKS, on unless it is \"false\").")
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
	fs.Var(int32Flag{&o.sizePolicy.Default}, "default-size",
		"spec.size given to a Memcached that sets none (default from MEMCACHED_DEFAULT_SIZE).")
	fs.Var(int32Flag{&o.sizePolicy.Min}, "min-size",
		"Smallest spec.size the validating webhook admits (default from MEMCACHED_MIN_SIZE).")
	fs.Var(int32Flag{&o.sizePolicy.Max}, "max-size",
		"Largest spec.size the validating webhook admits (default from MEMCACHED_MAX_SIZE).")
	fs.Float64Var(&o.kubeAPIQPS, "kube-api-qps", 50, "Queries per second the manager's API client may send.")
	fs.IntVar(&o.kubeAPIBurst, "kube-api-burst", 100, "Burst of queries above --kube-api-qps the client may send.")
	fs.IntVar(&o.workers, "max-concurrent-reconciles", 4, "Memcached objects reconciled in parallel.")
	fs.DurationVar(&o.shutdownDelay, "shutdown-delay", 0,
		"How long the manager keeps serving after SIGTERM, with /readyz failing, before it stops: the time the "+
			"Service needs to stop sending admission calls to a pod that is going away (the Deployments set 5s).")
	// A stack trace tells a user nothing an error's message does not; keep
	// them for panics (--zap-stacktrace-level brings them back).
	o.zap.StacktraceLevel = zapcore.DPanicLevel
	o.zap.BindFlags(fs)
	ctrlconfig.RegisterFlags(fs) // --kubeconfig, read by ctrl.GetConfig
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
	if o.shutdownDelay < 0 {
		return o, fmt.Errorf("--shutdown-delay=%s: must not be negative", o.shutdownDelay)
	}
	if o.metricsCertPath != "" && !o.secureMetrics {
		return o, errors.New("--metrics-cert-path needs --metrics-secure: plain HTTP metrics have no certificate")
	}
	o.watchNamespaces = controllers.ParseWatchNamespaces(os.Getenv("WATCH_NAMESPACE"))
	o.memcachedImage = os.Getenv("RELATED_IMAGE_MEMCACHED")
	o.podNamespace, o.podName = os.Getenv("POD_NAMESPACE"), os.Getenv("POD_NAME")
	o.olmCSV = os.Getenv("OPERATOR_CONDITION_NAME")
	return o, nil
}

func main() {
	o, err := parseOptions(os.Args[1:])
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "invalid flags:", err)
		os.Exit(2)
	}
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&o.zap)))
	if o.olmCSV != "" && o.podNamespace != "" {
		// Before the options read the environment: see package
		// subscriptionconfig.
		if err := adoptSubscriptionConfig(o); err != nil {
			ctrl.Log.Error(err, "reading the Subscription's configuration")
			os.Exit(1)
		}
		if o, err = parseOptions(os.Args[1:]); err != nil {
			fmt.Fprintln(os.Stderr, "invalid configuration from the Subscription:", err)
			os.Exit(2)
		}
	}
	if err := run(o); err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			err = fmt.Errorf("%w (is another memcached-operator running on this host? Stop it, or give this one other ports)", err)
		}
		ctrl.Log.Error(err, "manager stopped")
		os.Exit(1)
	}
}

// adoptSubscriptionConfig sets in this process the environment OLM gives
// the operator's pods only in its second rollout.
func adoptSubscriptionConfig(o options) error {
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return fmt.Errorf("loading kubeconfig: %w", err)
	}
	scheme := runtime.NewScheme()
	utilruntime.Must(operatorsv1alpha1.AddToScheme(scheme))
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r, err := subscriptionconfig.Apply(ctx, subscriptionconfig.Options{
		Reader: c, Namespace: o.podNamespace, CSV: o.olmCSV, Env: subscriptionconfig.OSEnv{},
	})
	if err != nil {
		return err
	}
	log := ctrl.Log.WithName("subscription-config")
	if len(r.Set)+len(r.Unset) > 0 {
		log.Info("took from the Subscription the environment OLM has not given this pod yet",
			"subscription", r.Subscription, "set", r.Set, "unset", r.Unset)
	}
	if len(r.Unresolved) > 0 {
		log.Info("the Subscription sets these from a Secret or ConfigMap: this pod runs without them until OLM rolls it",
			"subscription", r.Subscription, "variables", r.Unresolved)
	}
	return nil
}

func run(o options) error {
	log := ctrl.Log.WithName("setup")
	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(cachev1.AddToScheme(scheme))

	cfg, err := ctrl.GetConfig()
	if err != nil {
		return fmt.Errorf("loading kubeconfig: %w", err)
	}
	cfg.QPS, cfg.Burst = float32(o.kubeAPIQPS), o.kubeAPIBurst
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return err
	}
	platform, err := controllers.DetectPlatform(dc)
	if err != nil {
		return err
	}

	// Serving certificates: see package certs. Made before the manager so
	// that a missing or bad certificate stops the operator at once.
	metricsCerts, err := certs.NewMetricsSource(o.metricsCertPath)
	if err != nil {
		return err
	}
	webhookCerts := certs.Source(nil)
	if o.enableWebhooks {
		webhookCerts, err = certs.NewWebhookSource(certs.WebhookOptions{
			Mode:          o.webhookCertMode,
			Dir:           o.webhookCertDir,
			Port:          o.webhookPort,
			ManifestsPath: o.webhookManifestsPath,
			RESTConfig:    cfg,
		})
		if err != nil {
			return err
		}
	}

	// TLS 1.2 at least, stated rather than left to Go's default (which a
	// GODEBUG setting can lower). HTTP/2 stays off unless asked for: its
	// stream-reset flood (CVE-2023-44487) reaches every server that speaks it.
	tlsOpts := func(src certs.Source) []func(*tls.Config) {
		opts := []func(*tls.Config){func(c *tls.Config) { c.MinVersion = tls.VersionTLS12 }}
		if src != nil {
			opts = append(opts, src.ConfigureTLS)
		}
		if !o.enableHTTP2 {
			opts = append(opts, func(c *tls.Config) { c.NextProtos = []string{"http/1.1"} })
		}
		return opts
	}
	metricsOpts := metricsserver.Options{
		BindAddress:   o.metricsAddr,
		SecureServing: o.secureMetrics,
		TLSOpts:       tlsOpts(metricsCerts),
	}
	if o.secureMetrics {
		metricsOpts.FilterProvider = metricsauth.Filter
	}

	ctx, stopping := drain.NotifyContext(o.shutdownDelay, log)
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:  scheme,
		Cache:   controllers.CacheOptions(o.watchNamespaces),
		Metrics: metricsOpts,
		WebhookServer: drain.WebhookServer{Drain: stopping, Server: webhook.NewServer(webhook.Options{
			Host: webhookHost(o.webhookCertMode), Port: o.webhookPort, TLSOpts: tlsOpts(webhookCerts),
		})},
		HealthProbeBindAddress:  o.probeAddr,
		PprofBindAddress:        o.pprofAddr,
		LeaderElection:          o.leaderElect,
		LeaderElectionID:        "memcached-operator.cache.example.com",
		LeaderElectionNamespace: o.leaderElectionNamespace,
		// The process exits right after the manager stops, so hand the
		// lease over at once instead of making the next leader wait it out.
		LeaderElectionReleaseOnCancel: true,
	})
	if err != nil {
		return fmt.Errorf("creating manager: %w", err)
	}

	proxyVars := proxyenv.FromEnvironment()
	for _, v := range proxyVars {
		log.Info("propagating proxy variable to memcached containers", "name", v.Name, "value", proxyenv.Redact(v.Value))
	}
	log.Info("configuration", "platform", platform, "watchNamespaces", o.watchNamespaces,
		"sizePolicy", o.sizePolicy, "webhooks", o.enableWebhooks, "webhookCertMode", o.webhookCertMode,
		"metricsCertPath", o.metricsCertPath)

	if err := controllers.NewMemcachedReconciler(mgr, controllers.Options{
		Image:       o.memcachedImage,
		ProxyEnv:    proxyVars,
		DefaultSize: o.sizePolicy.Default,
		MinSize:     o.sizePolicy.Min,
		MaxSize:     o.sizePolicy.Max,
		Platform:    platform,
		Workers:     o.workers,
	}).SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up the Memcached controller: %w", err)
	}
	if err := mgr.Add(metricsCerts); err != nil {
		return err
	}
	if o.enableWebhooks {
		if err := webhooks.SetupWithManager(mgr, o.sizePolicy); err != nil {
			return fmt.Errorf("setting up the Memcached webhooks: %w", err)
		}
		if err := mgr.Add(webhookCerts); err != nil {
			return err
		}
		// Only OLM's certificate Secret needs keeping (and its name is the
		// only one the manager's rules let it read).
		if o.webhookCertMode == certs.ModeMounted && o.olmCSV != "" && o.podName != "" {
			dir := o.webhookCertDir
			if dir == "" {
				dir = certs.DefaultMountedDir
			}
			if err := mgr.Add(certs.OLMSecretKeeper{Options: certs.OLMSecretOptions{
				Reader: mgr.GetAPIReader(), Writer: mgr.GetClient(),
				PodNamespace: o.podNamespace, PodName: o.podName, MountPath: dir,
				Log: ctrl.Log.WithName("olm-secret"),
			}}); err != nil {
				return err
			}
		}
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("shutdown", stopping.Ready); err != nil {
		return err
	}
	if o.enableWebhooks {
		// Ready only once the webhook server serves, with the certificate
		// its source says can be used.
		if err := mgr.AddReadyzCheck("webhook-server", mgr.GetWebhookServer().StartedChecker()); err != nil {
			return err
		}
		if err := mgr.AddReadyzCheck("webhook-certificate", webhookCerts.Ready); err != nil {
			return err
		}
	}

	log.Info("starting manager")
	return mgr.Start(ctx)
}

// webhookHost is where the webhook server listens: in local mode only the API
// server on this host calls it, so nothing else on the network should reach
// it; in a pod, the Service does.
func webhookHost(mode certs.Mode) string {
	if mode == certs.ModeLocal {
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
