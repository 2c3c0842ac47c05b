// Package drain delays the manager's stop after SIGTERM, so that the
// admission webhooks keep answering while their pod leaves the Service.
//
// When a pod is deleted, kubelet's SIGTERM and the removal of its endpoint
// start at the same moment, but kube-proxy (and the API server's connections
// already open to the pod) follow the endpoint change a little later. A
// webhook server that closes at once refuses the calls that still arrive in
// that gap, and with failurePolicy Fail every Memcached write routed there is
// refused: during an OLM upgrade or a rollout, for reasons that have nothing
// to do with the object. Kubernetes' answer is a preStop sleep; the manager
// image has no shell, and the native sleep action is missing from older
// clusters, so the manager waits itself:
//
//	ctx, d := drain.NotifyContext(o.shutdownDelay, log)
//	_ = mgr.AddReadyzCheck("shutdown", d.Ready) // fails from the signal on
//	return mgr.Start(ctx)                        // cancelled delay later
//
// Connections the API server keeps open to the pod outlive its endpoint;
// wrapping the webhook server in [WebhookServer] closes each after its
// answer once stopping, so the next call goes through the Service again.
//
// A second signal exits at once, as controller-runtime's own handler does.
package drain
