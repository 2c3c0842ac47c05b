package certmanager

import (
	"context"
	"fmt"
	"time"

	cmapi "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	cmcontroller "github.com/cert-manager/cert-manager/pkg/controller"
	"github.com/cert-manager/cert-manager/pkg/controller/cainjector"
	cmutil "github.com/cert-manager/cert-manager/pkg/util"
	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/example-inc/memcached-operator/hack/repo"

	// cert-manager's controllers register themselves with pkg/controller
	// when imported; these are the ones a SelfSigned or CA Issuer needs.
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/approver"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/ca"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/selfsigned"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/issuing"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/keymanager"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/readiness"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/requestmanager"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/revisionmanager"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/trigger"
	_ "github.com/cert-manager/cert-manager/pkg/controller/issuers"

	// ... and the issuer types the issuers controller sets up.
	_ "github.com/cert-manager/cert-manager/pkg/issuer/ca"
	_ "github.com/cert-manager/cert-manager/pkg/issuer/selfsigned"
)

// certManagerControllers are cert-manager's controllers that issue and renew
// a Certificate from a SelfSigned or CA Issuer: without issuers (Issuer
// Ready), the approver or readiness, no Certificate becomes Ready.
var certManagerControllers = []string{
	"issuers",
	"certificaterequests-approver",
	"certificaterequests-issuer-selfsigned",
	"certificaterequests-issuer-ca",
	"certificates-trigger",
	"certificates-key-manager",
	"certificates-request-manager",
	"certificates-issuing",
	"certificates-readiness",
	"certificates-revision-manager",
}

// Start installs cert-manager's CRDs (as the module ships them) and runs its
// controller (the controllers above) and its CA injector (for webhook
// configurations) in this process until ctx is done, logging to log. It
// returns once the CRDs are established and the controllers started.
// kubeconfig and cfg are an admin's.
func Start(ctx context.Context, kubeconfig string, cfg *rest.Config, log logr.Logger) error {
	ctx = logr.NewContext(ctx, log)
	crds, err := repo.CertManagerCRDDir()
	if err != nil {
		return err
	}
	if _, err := envtest.InstallCRDs(cfg, envtest.CRDInstallOptions{Paths: []string{crds}, ErrorIfPathMissing: true}); err != nil {
		return fmt.Errorf("cert-manager CRDs: %w", err)
	}

	// The controller: a context factory, each controller built from it, then
	// the shared informers started, as cert-manager's cmd/controller does.
	factory, err := cmcontroller.NewContextFactory(ctx, cmcontroller.ContextOptions{
		Kubeconfig:         kubeconfig,
		KubernetesAPIQPS:   100,
		KubernetesAPIBurst: 200,
		IssuerOptions:      cmcontroller.IssuerOptions{ClusterResourceNamespace: "cert-manager"},
		// A failed request is retried after an hour by default.
		CertificateOptions: cmcontroller.CertificateOptions{
			CertificateRequestMinimumBackoffDuration: time.Second,
			CertificateRequestMaximumBackoffDuration: 5 * time.Second,
		},
	})
	if err != nil {
		return fmt.Errorf("cert-manager context: %w", err)
	}
	for _, name := range certManagerControllers {
		newController, ok := cmcontroller.Known()[name]
		if !ok {
			return fmt.Errorf("cert-manager controller %q is not registered (blank import missing?)", name)
		}
		c, err := newController(factory)
		if err != nil {
			return fmt.Errorf("cert-manager controller %q: %w", name, err)
		}
		go func() {
			if err := c.Run(1, ctx); err != nil {
				log.Error(err, "cert-manager controller stopped", "controller", name)
			}
		}()
	}
	cmctx, err := factory.Build()
	if err != nil {
		return err
	}
	cmctx.KubeSharedInformerFactory.Start(ctx.Done())
	cmctx.SharedInformerFactory.Start(ctx.Done())

	// The CA injector: a controller-runtime manager that reads Secrets
	// straight from the API server (it only caches their metadata), with a
	// user agent, from which it takes its field manager name.
	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(cmapi.AddToScheme(scheme))
	mgr, err := ctrl.NewManager(cmutil.RestConfigWithUserAgent(rest.CopyConfig(cfg), "cainjector"), ctrl.Options{
		Scheme:                 scheme,
		Logger:                 log.WithName("cainjector"),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		WebhookServer:          webhook.NewServer(webhook.Options{Port: -1}),
		Client:                 client.Options{Cache: &client.CacheOptions{DisableFor: []client.Object{&corev1.Secret{}}}},
	})
	if err != nil {
		return fmt.Errorf("cainjector manager: %w", err)
	}
	if err := cainjector.RegisterAllInjectors(ctx, mgr, cainjector.SetupOptions{
		EnableCertificatesDataSource: true,
		EnabledReconcilersFor: map[string]bool{
			"mutatingwebhookconfiguration":   true,
			"validatingwebhookconfiguration": true,
		},
	}); err != nil {
		return fmt.Errorf("cainjector: %w", err)
	}
	go func() {
		if err := mgr.Start(ctx); err != nil {
			log.Error(err, "cainjector stopped")
		}
	}()
	return nil
}
