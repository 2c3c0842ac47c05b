package webhooks_test

import (
	"context"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
	"github.com/example-inc/memcached-operator/api/v1/gen"
	"github.com/example-inc/memcached-operator/certs/certstest"
	"github.com/example-inc/memcached-operator/hack/repo"
	"github.com/example-inc/memcached-operator/webhooks"
)

// The suite runs the webhooks behind a real kube-apiserver (envtest): the
// CRD from config/crd/bases, the webhook configurations generated into
// config/webhook, served by a manager with the default SizePolicy.

var (
	testEnv *envtest.Environment
	// k8sClient records the API server's warnings in warnings.
	k8sClient client.Client
	warnings  *warningRecorder
	cancel    context.CancelFunc
)

func TestWebhooks(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Webhooks Suite")
}

var _ = BeforeSuite(func() {
	logf.SetLogger(zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true)))
	testEnv = &envtest.Environment{
		CRDInstallOptions: envtest.CRDInstallOptions{
			Paths:              []string{repo.CRDDir()},
			ErrorIfPathMissing: true,
		},
		WebhookInstallOptions: envtest.WebhookInstallOptions{
			Paths: []string{repo.WebhookDir()},
		},
		BinaryAssetsDirectory: repo.ControlPlaneDir(),
	}
	cfg, err := testEnv.Start()
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { Expect(testEnv.Stop()).To(Succeed()) })
	Expect(testEnv.WebhookInstallOptions.MutatingWebhooks).To(HaveLen(1))
	Expect(testEnv.WebhookInstallOptions.ValidatingWebhooks).To(HaveLen(1))

	scheme := gen.Scheme()
	wio := testEnv.WebhookInstallOptions
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:  scheme,
		Metrics: metricsserver.Options{BindAddress: "0"},
		WebhookServer: webhook.NewServer(webhook.Options{
			Host:    wio.LocalServingHost,
			Port:    wio.LocalServingPort,
			CertDir: wio.LocalServingCertDir,
		}),
	})
	Expect(err).NotTo(HaveOccurred())
	Expect(webhooks.SetupWithManager(mgr, webhooks.DefaultSizePolicy())).To(Succeed())

	var ctx context.Context
	ctx, cancel = context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer GinkgoRecover()
		defer close(done)
		Expect(mgr.Start(ctx)).To(Succeed())
	}()
	DeferCleanup(func() {
		cancel()
		Eventually(done).WithTimeout(30 * time.Second).Should(BeClosed())
	})

	// Wait until the webhook server answers TLS.
	addr := net.JoinHostPort(wio.LocalServingHost, fmt.Sprint(wio.LocalServingPort))
	Eventually(func() error {
		_, err := certstest.Handshake(ctx, addr, certstest.Offer{})
		return err
	}).WithTimeout(20 * time.Second).WithPolling(100 * time.Millisecond).Should(Succeed())

	warnings = &warningRecorder{}
	clientCfg := rest.CopyConfig(cfg)
	clientCfg.WarningHandler = warnings
	k8sClient, err = client.New(clientCfg, client.Options{Scheme: scheme})
	Expect(err).NotTo(HaveOccurred())
})

// warningRecorder keeps every Warning header the API server sends.
type warningRecorder struct {
	mu   sync.Mutex
	msgs []string
}

func (r *warningRecorder) HandleWarningHeader(_ int, _ string, text string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.msgs = append(r.msgs, text)
}

// take returns the warnings recorded since the last take.
func (r *warningRecorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	msgs := r.msgs
	r.msgs = nil
	return msgs
}

// createQuietly creates mc and forgets the warnings its creation drew, so
// that a spec reads only those of what it does next.
func createQuietly(ctx context.Context, mc *cachev1.Memcached) *cachev1.Memcached {
	GinkgoHelper()
	Expect(k8sClient.Create(ctx, mc)).To(Succeed())
	warnings.take()
	return mc
}
