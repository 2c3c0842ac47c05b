package app

import (
	"context"
	"crypto/fips140"
	"crypto/tls"
	"errors"
	"fmt"
	"time"

	cmapi "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	configv1 "github.com/openshift/api/config/v1"
	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/discovery"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
	"github.com/example-inc/memcached-operator/certs"
	"github.com/example-inc/memcached-operator/certs/metricsauth"
	"github.com/example-inc/memcached-operator/certs/tlsprofile"
	"github.com/example-inc/memcached-operator/controllers"
	"github.com/example-inc/memcached-operator/controllers/proxyenv"
	"github.com/example-inc/memcached-operator/controllers/servedcert"
	"github.com/example-inc/memcached-operator/webhooks"
	"github.com/example-inc/memcached-operator/webhooks/admissionlimit"
	"github.com/example-inc/memcached-operator/webhooks/drain"
)

// run starts the manager with the Memcached controller, its webhooks and
// health checks, and returns when it stops.
func run(o options) error {
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return fmt.Errorf("loading kubeconfig: %w", err)
	}
	ctx, stopping := drain.NotifyContext(o.shutdownDelay, ctrl.Log.WithName("setup"))
	return serve(ctx, o, cfg, stopping)
}

// serve runs the manager against the API server cfg points at until ctx is
// done, draining its webhooks once stopping says so.
func serve(ctx context.Context, o options, cfg *rest.Config, stopping *drain.Drain) error {
	cfg = apiClientConfig(o, cfg)

	// Made before the manager, so that a missing or bad certificate stops
	// the operator at once.
	metricsCerts, err := certs.NewMetricsSource(o.metricsCertPath, ctrl.Log.WithName("metrics-certificate"))
	if err != nil {
		return err
	}
	var webhookCerts certs.Source
	if o.enableWebhooks {
		webhookCerts, err = certs.NewWebhookSource(certs.WebhookOptions{
			Mode: o.webhookCertMode, Dir: o.webhookCertDir, Port: o.webhookPort,
			ManifestsPath: o.webhookManifestsPath, RESTConfig: cfg,
		})
		if err != nil {
			return err
		}
	}

	apis, err := discoverAPIs(cfg)
	if err != nil {
		return err
	}
	serving := tlsprofile.NewServing(o.tlsOverrides)
	mgr, err := newManager(o, cfg, apis, serverTLS{metricsCerts, webhookCerts, serving}, stopping)
	if err != nil {
		return err
	}
	if err := followClusterTLS(ctx, mgr, apis, serving); err != nil {
		return err
	}
	if err := setupController(mgr, o, apis); err != nil {
		return err
	}
	if err := setupNetworkPolicies(ctx, mgr, o); err != nil {
		return err
	}
	if err := mgr.Add(metricsCerts); err != nil {
		return err
	}
	if o.enableWebhooks {
		if err := setupWebhooks(mgr, o, webhookCerts); err != nil {
			return err
		}
	}
	if err := addHealthChecks(mgr, o, webhookCerts, stopping); err != nil {
		return err
	}
	// How the Go Cryptographic Module runs, for an admin who must show
	// that it is in FIPS 140-3 mode (docs/fips.md).
	ctrl.Log.WithName("setup").Info("starting manager",
		"fips140", fips140.Enabled(), "fips140Enforced", fips140.Enforced(), "fips140Module", fips140.Version())
	return mgr.Start(ctx)
}

// serverTLS is where the TLS servers get their certificates and settings.
type serverTLS struct {
	metricsCerts, webhookCerts certs.Source
	serving                    *tlsprofile.Serving
}

// apiClientConfig is cfg as the manager's API client uses it: its limits,
// the proxy the operator was given, and no compression. Watch events and
// lists come from an API server on the cluster's own network, where
// gzipping them costs both sides CPU and saves nothing worth it, as
// kube-controller-manager and kube-scheduler decided (kubernetes#80919).
func apiClientConfig(o options, cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = float32(o.kubeAPIQPS), o.kubeAPIBurst
	cfg.Proxy = proxyenv.ClientProxy()
	cfg.DisableCompression = true
	return cfg
}

// newManager makes the manager and its servers: metrics, webhooks (drained
// on SIGTERM by stopping) and health probes.
func newManager(o options, cfg *rest.Config, apis servedAPIs, st serverTLS, stopping *drain.Drain) (manager.Manager, error) {
	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(cachev1.AddToScheme(scheme))
	utilruntime.Must(configv1.AddToScheme(scheme))
	utilruntime.Must(monitoringv1.AddToScheme(scheme))
	utilruntime.Must(cmapi.AddToScheme(scheme))
	metricsOpts := metricsserver.Options{
		BindAddress:   o.metricsAddr,
		SecureServing: o.secureMetrics,
		TLSOpts:       o.tlsOptions(st.metricsCerts, st.serving),
	}
	if o.secureMetrics {
		metricsOpts.FilterProvider = metricsauth.Filter
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:  scheme,
		Cache:   o.cacheNetworkPolicies(controllers.CacheOptions(o.watchNamespaces, apis.prometheusOperator, apis.certManager)),
		Metrics: metricsOpts,
		WebhookServer: admissionlimit.NewWebhookServer(drain.WebhookServer{Drain: stopping, Server: webhook.NewServer(webhook.Options{
			Host: o.webhookHost(), Port: o.webhookPort, TLSOpts: o.tlsOptions(st.webhookCerts, st.serving),
		})}, admissionlimit.Options{}),
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
		return nil, fmt.Errorf("creating manager: %w", err)
	}
	return mgr, nil
}

// tlsOptions are a server's TLS settings with src's certificate (nil: the
// server's own), and the versions and ciphers serving holds at each
// handshake (the cluster's profile, or the flags). HTTP/2 stays off unless
// asked for: its stream-reset flood (CVE-2023-44487) reaches every server
// that speaks it.
func (o options) tlsOptions(src certs.Source, serving *tlsprofile.Serving) []func(*tls.Config) {
	var opts []func(*tls.Config)
	if src != nil {
		opts = append(opts, src.ConfigureTLS)
	}
	if !o.enableHTTP2 {
		opts = append(opts, func(c *tls.Config) { c.NextProtos = []string{"http/1.1"} })
	}
	return append(opts, serving.ConfigureTLS)
}

// followClusterTLS puts serving on the cluster's TLS profile before any
// server starts, and keeps it there while the manager runs; where the
// cluster has no profile, serving stays on Intermediate.
func followClusterTLS(ctx context.Context, mgr manager.Manager, apis servedAPIs, serving *tlsprofile.Serving) error {
	log := ctrl.Log.WithName("tls-profile")
	if !apis.clusterTLS {
		log.Info("no cluster TLS security profile (apiservers.config.openshift.io is not served): serving Intermediate",
			"settings", serving.Settings().String())
		return nil
	}
	p, err := tlsprofile.Read(ctx, mgr.GetAPIReader())
	if err != nil {
		return err
	}
	now, _, ignored := serving.Set(p)
	log.Info("following the cluster's TLS security profile", "settings", now.String(), "ignored", ignored)
	return mgr.Add(tlsprofile.Follower{Serving: serving, Informers: mgr.GetCache(), Log: log})
}

// servedAPIs is what the API server serves that changes what the operator
// does, asked once at start.
type servedAPIs struct {
	platform controllers.Platform
	// clusterTLS: OpenShift's APIServer, which holds the TLS profile.
	clusterTLS bool
	// prometheusOperator: PodMonitor and PrometheusRule.
	prometheusOperator bool
	// certManager: cert-manager's Certificate.
	certManager bool
}

func discoverAPIs(cfg *rest.Config) (servedAPIs, error) {
	var apis servedAPIs
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return apis, err
	}
	if apis.platform, err = controllers.DetectPlatform(dc); err != nil {
		return apis, err
	}
	if apis.clusterTLS, err = tlsprofile.Served(dc); err != nil {
		return apis, err
	}
	if apis.prometheusOperator, err = controllers.PrometheusOperatorServed(dc); err != nil {
		return apis, err
	}
	apis.certManager, err = controllers.CertManagerServed(dc)
	return apis, err
}

// setupController registers the Memcached reconciler for the APIs the
// API server serves.
func setupController(mgr manager.Manager, o options, apis servedAPIs) error {
	log := ctrl.Log.WithName("setup")
	proxyVars := proxyenv.FromEnvironment()
	for _, v := range proxyVars {
		log.Info("propagating proxy variable to memcached containers", "name", v.Name, "value", proxyenv.Redact(v.Value))
	}
	log.Info("configuration", "platform", apis.platform, "clusterTLSProfile", apis.clusterTLS,
		"prometheusOperator", apis.prometheusOperator, "certManager", apis.certManager, "watchNamespaces", o.watchNamespaces, "sizePolicy", o.sizePolicy, "webhooks", o.enableWebhooks, "webhookCertMode", o.webhookCertMode,
		"metricsCertPath", o.metricsCertPath, "tlsFlags", o.tlsOverrides.String())
	reconcilerMetrics, err := registerReconcilerMetrics(metrics.Registry)
	if err != nil {
		return err
	}
	served, err := setupServedCertificates(mgr, o)
	if err != nil {
		return err
	}
	err = controllers.NewMemcachedReconciler(mgr, controllers.Options{
		Image:              o.memcachedImage,
		TLSReloaderImage:   o.tlsReloaderImage,
		ExporterImage:      o.exporterImage,
		ClusterTLSProfile:  apis.clusterTLS,
		PrometheusOperator: apis.prometheusOperator,
		CertManager:        apis.certManager,
		ProxyEnv:           proxyVars,
		DefaultSize:        o.sizePolicy.Default,
		MinSize:            o.sizePolicy.Min,
		MaxSize:            o.sizePolicy.Max,
		Platform:           apis.platform,
		Workers:            o.workers,
		Metrics:            reconcilerMetrics,
		ServedCertificates: served,
		Warmup:             warmupOptions(o),
	}).SetupWithManager(mgr)
	if err != nil {
		return fmt.Errorf("setting up the Memcached controller: %w", err)
	}
	return nil
}

// registerReconcilerMetrics registers the reconciler's metrics on reg, which
// the manager's /metrics serves (controller-runtime's registry), or returns
// those registered by an earlier manager of this process: the registry is
// the process's, the manager is not.
func registerReconcilerMetrics(reg prometheus.Registerer) (*controllers.Metrics, error) {
	m := controllers.NewMetrics()
	err := reg.Register(m)
	if are, ok := errors.AsType[prometheus.AlreadyRegisteredError](err); ok {
		if existing, ok := are.ExistingCollector.(*controllers.Metrics); ok {
			return existing, nil
		}
	}
	if err != nil {
		return nil, fmt.Errorf("registering the reconciler's metrics: %w", err)
	}
	return m, nil
}

// warmupOptions are nil when --warmup-interval is 0: nothing is measured.
func warmupOptions(o options) *controllers.WarmupOptions {
	if o.warmupInterval == 0 {
		return nil
	}
	return &controllers.WarmupOptions{Interval: o.warmupInterval}
}

// setupServedCertificates adds to mgr the watcher of the certificates TLS
// pods serve, with its metric; nil when the checks are off.
func setupServedCertificates(mgr manager.Manager, o options) (*servedcert.Watcher, error) {
	if o.servedCertInterval == 0 {
		return nil, nil
	}
	w := servedcert.NewWatcher(mgr.GetCache(), servedcert.Options{Interval: o.servedCertInterval, Timeout: 2 * time.Second})
	// A manager run again in one process (tests) replaces the last one's.
	err := metrics.Registry.Register(w)
	if are, ok := errors.AsType[prometheus.AlreadyRegisteredError](err); ok && metrics.Registry.Unregister(are.ExistingCollector) {
		err = metrics.Registry.Register(w)
	}
	if err != nil {
		return nil, fmt.Errorf("registering the served-certificate metric: %w", err)
	}
	return w, mgr.Add(w)
}

// setupWebhooks registers the Memcached webhooks and what keeps their
// certificate current.
func setupWebhooks(mgr manager.Manager, o options, webhookCerts certs.Source) error {
	if err := webhooks.SetupWithManager(mgr, o.sizePolicy); err != nil {
		return fmt.Errorf("setting up the Memcached webhooks: %w", err)
	}
	if err := mgr.Add(webhookCerts); err != nil {
		return err
	}
	// Only OLM's certificate Secret needs keeping (and its name is the only
	// one the manager's rules let it read).
	if o.webhookCertMode != certs.ModeMounted || o.olmCSV == "" || o.podName == "" {
		return nil
	}
	dir := o.webhookCertDir
	if dir == "" {
		dir = certs.DefaultMountedDir
	}
	return mgr.Add(certs.OLMSecretKeeper{Options: certs.OLMSecretOptions{
		Reader: mgr.GetAPIReader(), Writer: mgr.GetClient(),
		PodNamespace: o.podNamespace, PodName: o.podName, MountPath: dir,
		Log: ctrl.Log.WithName("olm-secret"),
	}})
}

// addHealthChecks adds /healthz and /readyz. Ready means serving: not
// draining, and with webhooks, their server started with a certificate its
// source says can be used.
func addHealthChecks(mgr manager.Manager, o options, webhookCerts certs.Source, stopping *drain.Drain) error {
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("shutdown", stopping.Ready); err != nil {
		return err
	}
	if !o.enableWebhooks {
		return nil
	}
	if err := mgr.AddReadyzCheck("webhook-server", mgr.GetWebhookServer().StartedChecker()); err != nil {
		return err
	}
	return mgr.AddReadyzCheck("webhook-certificate", webhookCerts.Ready)
}
