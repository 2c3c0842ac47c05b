package certs_test

import (
	"crypto/tls"

	ctrl "sigs.k8s.io/controller-runtime"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/example-inc/memcached-operator/certs"
)

// The manager's servers take their certificates from sources, and the
// manager keeps the sources running: here the webhook certificate mounted by
// cert-manager or OLM, and a metrics certificate from --metrics-cert-path
// (an empty path falls back to a self-signed one).
func Example() {
	cfg := ctrl.GetConfigOrDie()
	webhookCerts, err := certs.NewWebhookSource(certs.WebhookOptions{
		Mode: certs.ModeMounted,
		Dir:  certs.DefaultMountedDir,
		Port: 9443,
	})
	if err != nil {
		panic(err) // e.g. "mounted certificate in /tmp/k8s-webhook-server/serving-certs ...: no such file or directory"
	}
	metricsCerts, err := certs.NewMetricsSource("/tmp/k8s-metrics-server/metrics-certs")
	if err != nil {
		panic(err)
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		WebhookServer: webhook.NewServer(webhook.Options{
			Port:    9443,
			TLSOpts: []func(*tls.Config){webhookCerts.ConfigureTLS},
		}),
		Metrics: metricsserver.Options{
			BindAddress:   ":8443",
			SecureServing: true,
			TLSOpts:       []func(*tls.Config){metricsCerts.ConfigureTLS},
		},
	})
	if err != nil {
		panic(err)
	}
	// Renewals reach the servers while the sources run.
	for _, src := range []certs.Source{webhookCerts, metricsCerts} {
		if err := mgr.Add(src); err != nil {
			panic(err)
		}
	}
}
