package e2e

// The labels that select a part of the suite (make test-e2e LABELS=tls;
// any Ginkgo label filter). Every top-level container carries at least one.
const (
	// labelNode: memcached pods that serve on the real node, and what
	// the operator makes of them (probes, proxy, image changes, scaling).
	labelNode = "node"
	// labelInstall: config/default applied with kubectl, its certificates
	// from cert-manager.
	labelInstall = "install"
	// labelTLS: certificates of memcached and of the operator's servers,
	// issued, served and renewed in place.
	labelTLS = "tls"
	// labelMonitoring: the exporter sidecar and the operator's metrics.
	labelMonitoring = "monitoring"
	// labelDNS: the cluster's DNS as a Memcached's clients meet it.
	labelDNS = "dns"
	// labelFaults: what breaks around the operator and memcached: the
	// operator killed, failed over, its webhooks down or sent garbage; the
	// node's containerd and kubelet stopped and killed under load, and a
	// drain; the API server and etcd restarted.
	labelFaults = "faults"
	// labelDisruptive: specs that stop a part of the cluster every spec
	// shares (the API server, etcd, containerd, the kubelet). They are
	// also Serial: they never run beside another spec.
	labelDisruptive = "disruptive"
	// labelSecurity: the operator with exactly the generated RBAC, Pod
	// Security restricted, metrics authentication, TLS versions of its
	// servers, proxy credentials kept out of its logs.
	labelSecurity = "security"
	// labelOLM: the bundle installed by a real OLM in every install mode,
	// upgraded under continuous writes, and the release bundle installed
	// disconnected.
	labelOLM = "olm"
	// labelScorecard: operator-sdk scorecard with the bundle's
	// configuration.
	labelScorecard = "scorecard"
	// labelHost: specs that need the cluster to be the suite's own on
	// this host. They stop or restart its components, read its node's
	// processes, import images, run the operator on this host for the
	// API server to call, or reach pods and Services from this host. On
	// a cluster the suite did not start (E2E_CLUSTER=existing) they are
	// left out, and named.
	labelHost = "host"
)
