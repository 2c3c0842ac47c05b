/*
Package certs gives the manager's servers their serving certificates.

Every mode is a [Source]: one of the server's TLSOpts ([Source.ConfigureTLS]),
a manager.Runnable that keeps the certificate current ([Source.Start]) and a
readiness check for /readyz ([Source.Ready]).
The sources:

  - [MountedSource] serves tls.crt and tls.key from a directory that
    something else fills: cert-manager's Secret volume (config/default mounts
    Secret webhook-server-cert at [DefaultMountedDir]) or OLM, which mounts
    its own certificate at the same path. Kubelet updates a mounted Secret in
    place when the certificate is renewed; controller-runtime's certwatcher
    notices and the server presents the new certificate at the next
    handshake, without a restart.
  - [LocalSource] is for `make run`, where the operator runs on the
    developer's host and the API server runs there too. It generates a CA and
    a serving certificate for 127.0.0.1 and localhost once, keeps them in a
    directory and reuses them while they are valid, and points the webhook
    configurations (config/webhook/manifests.yaml, renamed with
    [LocalNamePrefix]) at https://127.0.0.1:<port>/<path> with that CA. It
    deletes those configurations again when the manager stops, so a stopped
    `make run` leaves no webhook behind that fails every request. The
    directory must be the user's and writable by no one else, and files in
    it are reused only if they are the user's own, private, and not links:
    whoever could plant a CA or read the key there could answer the API
    server's webhook calls.
  - [NewMetricsSource] serves the metrics endpoint with a mounted
    certificate when there is one (--metrics-cert-path), and otherwise leaves
    the choice to controller-runtime, which generates a self-signed
    certificate at start. OLM provides no metrics certificate: the bundle
    mounts the Secret OpenShift's service CA writes as an optional volume,
    and the source serves a self-signed certificate until it appears.

Under OLM, [OLMSecretKeeper] keeps OLM's webhook certificate Secret, and its
CA, across upgrades. Who may read the metrics is package metricsauth's
concern.

The webhook server's mode is picked by [WebhookOptions.Mode]
(--webhook-cert-mode): [ModeMounted], the default and the only mode for a
cluster install, or [ModeLocal].

Use it from main:

	webhookCerts, err := certs.NewWebhookSource(certs.WebhookOptions{Mode: mode, Dir: dir, Port: port, RESTConfig: cfg})
	metricsCerts, err := certs.NewMetricsSource(metricsCertPath, log)
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		WebhookServer: webhook.NewServer(webhook.Options{Port: port, TLSOpts: []func(*tls.Config){webhookCerts.ConfigureTLS}}),
		Metrics:       metricsserver.Options{SecureServing: true, TLSOpts: []func(*tls.Config){metricsCerts.ConfigureTLS}},
	})
	err = mgr.Add(webhookCerts)
	err = mgr.Add(metricsCerts)
	err = mgr.AddReadyzCheck("webhook-certificate", webhookCerts.Ready)
*/
package certs
