package certs_test

import (
	"context"
	"crypto/tls"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/example-inc/memcached-operator/api/v1/gen"
	"github.com/example-inc/memcached-operator/certs"
	"github.com/example-inc/memcached-operator/certs/certstest"
	"github.com/example-inc/memcached-operator/hack/repo"
	"github.com/example-inc/memcached-operator/webhooks"
)

// Local mode as `make run` uses it, against a real API server: the API server
// calls the webhooks on 127.0.0.1 through the configurations the source
// writes, trusting the local CA, and the configurations go away when the
// manager stops.
func TestLocalModeAgainstAnAPIServer(t *testing.T) {
	g := NewWithT(t)
	logToTest(t)
	cfg := startAPIServer(t, &envtest.Environment{
		CRDInstallOptions: envtest.CRDInstallOptions{Paths: []string{repo.CRDDir()}, ErrorIfPathMissing: true},
	})

	scheme := gen.Scheme()
	k8s, err := client.New(cfg, client.Options{Scheme: scheme})
	g.Expect(err).NotTo(HaveOccurred())

	ports, err := certstest.FreePorts(1)
	g.Expect(err).NotTo(HaveOccurred())
	port := ports[0]
	dir := t.TempDir()
	newSource := func() certs.Source {
		src, err := certs.NewWebhookSource(certs.WebhookOptions{
			Mode:          certs.ModeLocal,
			Dir:           dir,
			Port:          port,
			ManifestsPath: filepath.Join(repo.WebhookDir(), "manifests.yaml"),
			RESTConfig:    cfg,
		})
		g.Expect(err).NotTo(HaveOccurred())
		return src
	}
	src := newSource()
	local := src.(*certs.LocalSource)

	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		WebhookServer: webhook.NewServer(webhook.Options{
			Host: "127.0.0.1", Port: port, TLSOpts: []func(*tls.Config){src.ConfigureTLS},
		}),
	})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(webhooks.SetupWithManager(mgr, webhooks.DefaultSizePolicy())).To(Succeed())
	g.Expect(mgr.Add(src)).To(Succeed())
	// Not ready before the configurations point at this host: the API
	// server would not call the webhooks yet.
	g.Expect(src.Ready(nil)).To(MatchError(ContainSubstring("do not point at this host")))
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan error, 1)
	go func() { stopped <- mgr.Start(ctx) }()
	t.Cleanup(cancel)

	// The API server refuses a bad Memcached through the webhook ...
	g.Eventually(func() error {
		return k8s.Create(ctx, gen.Memcached("default", "too-big", gen.WithSize(40)))
	}).WithTimeout(30 * time.Second).WithPolling(200 * time.Millisecond).
		Should(MatchError(ContainSubstring(`admission webhook "vmemcached-v1.kb.io" denied the request`)))
	g.Expect(src.Ready(nil)).To(Succeed())
	// ... and defaults a good one.
	mc := gen.Memcached("default", "defaulted")
	g.Expect(k8s.Create(ctx, mc)).To(Succeed())
	g.Expect(mc.Spec.Size).To(HaveValue(Equal(webhooks.DefaultSizePolicy().Default)))

	var validating admissionregistrationv1.ValidatingWebhookConfiguration
	g.Expect(k8s.Get(ctx, client.ObjectKey{Name: certs.LocalNamePrefix + "validating-webhook-configuration"}, &validating)).To(Succeed())
	g.Expect(validating.Webhooks).To(HaveLen(2))
	for _, w := range validating.Webhooks {
		g.Expect(w.ClientConfig.CABundle).To(Equal(local.CABundle()))
		g.Expect(*w.ClientConfig.URL).To(HavePrefix("https://127.0.0.1:" + strconv.Itoa(port) + "/"))
	}

	// Stopping the manager removes the configurations: no webhook is left
	// to refuse every request while nothing serves it.
	cancel()
	g.Eventually(stopped).WithTimeout(30 * time.Second).Should(Receive(BeNil()))
	for name, obj := range map[string]client.Object{
		"mutating-webhook-configuration":   &admissionregistrationv1.MutatingWebhookConfiguration{},
		"validating-webhook-configuration": &admissionregistrationv1.ValidatingWebhookConfiguration{},
	} {
		err := k8s.Get(context.Background(), client.ObjectKey{Name: certs.LocalNamePrefix + name}, obj)
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "%s: %v", name, err)
	}

	// The next run reuses the CA.
	g.Expect(newSource().(*certs.LocalSource).CABundle()).To(Equal(local.CABundle()))
}

// startAPIServer starts env's etcd and kube-apiserver, from bin/k8s, until
// the test ends.
func startAPIServer(t *testing.T, env *envtest.Environment) *rest.Config {
	t.Helper()
	env.BinaryAssetsDirectory = repo.ControlPlaneDir()
	for _, bin := range []string{"etcd", "kube-apiserver"} {
		if _, err := os.Stat(filepath.Join(env.BinaryAssetsDirectory, bin)); err != nil {
			t.Fatalf("no %s in %s (run make control-plane): %v", bin, env.BinaryAssetsDirectory, err)
		}
	}
	cfg, err := env.Start()
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = env.Stop() })
	return cfg
}

// logToTest collects the manager's logs and shows them if the test fails.
// (t.Log cannot be the sink: controller-runtime may still log after the test
// has returned.)
func logToTest(t *testing.T) {
	buf := gbytes.NewBuffer()
	logf.SetLogger(zap.New(zap.WriteTo(buf), zap.UseDevMode(true)))
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(string(buf.Contents()))
		}
	})
}
