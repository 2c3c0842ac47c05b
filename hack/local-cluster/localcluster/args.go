package localcluster

import (
	"fmt"
	"path/filepath"
	"strconv"
)

// Cluster-wide address ranges. Pods and Services on fake nodes get addresses
// that nothing listens on. With a real node both ranges are routed to its
// bridge (networkUp), so that a connection to one of them stays on the
// machine instead of following the default route; kwok hands out podCIDR.
const (
	serviceCIDR        = "10.96.0.0/16"
	apiServerServiceIP = "10.96.0.1"
	podCIDR            = "10.244.0.0/16"
)

// Fake node markers. kwok manages exactly the nodes carrying the annotation,
// so a kwok pointed at a shared cluster by mistake touches nothing else.
const (
	fakeNodeAnnotation = "kwok.x-k8s.io/node"
	fakeNodeValue      = "fake"
)

// clientQPS and clientBurst are for the controller manager and scheduler:
// the client-go defaults (20/30) make a 3,000-pod rollout take minutes.
// kwok needs none; it does not rate-limit itself.
const (
	clientQPS   = 500
	clientBurst = 1000
)

// layout is where a cluster keeps its files under Options.Dir.
type layout struct {
	dir string
}

func (l layout) kubeconfig() string { return filepath.Join(l.dir, "kubeconfig") }
func (l layout) logs() string       { return filepath.Join(l.dir, "logs") }
func (l layout) etcdData() string   { return filepath.Join(l.dir, "etcd") }
func (l layout) pki() string        { return filepath.Join(l.dir, "pki") }
func (l layout) config() string     { return filepath.Join(l.dir, "config") }
func (l layout) log(c Component) string {
	return filepath.Join(l.logs(), string(c)+".log")
}

// componentKubeconfig is the kubeconfig a component uses to reach the API
// server, each with its own client certificate.
func (l layout) componentKubeconfig(c Component) string {
	return filepath.Join(l.config(), string(c)+".kubeconfig")
}

// scratch is a per-component directory for files a component insists on
// writing (self-signed certificates), kept out of system paths.
func (l layout) scratch(c Component) string {
	return filepath.Join(l.dir, "pki", string(c))
}

// ports are the listening ports of one cluster, all on 127.0.0.1.
type ports struct {
	etcdClient, etcdPeer, apiServer, controllerManager, scheduler int
}

func loopbackURL(scheme string, port int) string {
	return scheme + "://127.0.0.1:" + strconv.Itoa(port)
}

func etcdArgs(l layout, p ports) []string {
	peer := loopbackURL("http", p.etcdPeer)
	client := loopbackURL("http", p.etcdClient)
	return []string{
		"--name=localcluster",
		"--data-dir=" + l.etcdData(),
		"--listen-client-urls=" + client,
		"--advertise-client-urls=" + client,
		"--listen-peer-urls=" + peer,
		"--initial-advertise-peer-urls=" + peer,
		"--initial-cluster=localcluster=" + peer,
		// Ignored when the data directory exists, so a restart keeps the data.
		"--initial-cluster-state=new",
		// The cluster is thrown away after the test; fsync would only make
		// every write wait for the disk, which dominates large rollouts.
		"--unsafe-no-fsync=true",
	}
}

func apiServerArgs(l layout, p ports, k *pki, realNode bool) []string {
	args := []string{
		"--etcd-servers=" + loopbackURL("http", p.etcdClient),
		"--secure-port=" + strconv.Itoa(p.apiServer),
		"--cert-dir=" + l.scratch(APIServer),
		"--tls-cert-file=" + k.path(servingCertFile),
		"--tls-private-key-file=" + k.path(servingKeyFile),
		"--client-ca-file=" + k.path(caCertFile),
		"--authorization-mode=RBAC",
		"--service-cluster-ip-range=" + serviceCIDR,
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + k.path(saPubFile),
		"--service-account-signing-key-file=" + k.path(saKeyFile),
		"--allow-privileged=true",
		// By default a SIGTERM'ed API server waits up to its request timeout
		// (60s) for open watches, which the controllers always hold. In this
		// mode it drains ordinary requests, then gives the rest 2 seconds.
		"--shutdown-send-retry-after=true",
	}
	if !realNode {
		return append(args,
			"--bind-address=127.0.0.1",
			"--advertise-address=127.0.0.1",
			// The endpoint reconciler refuses a loopback address for the
			// kubernetes Service's endpoints. Nothing in this cluster reaches
			// the API server through that Service, so leave it without
			// endpoints rather than advertise an address nobody listens on.
			"--endpoint-reconciler-type=none",
			// Pods get no service account token volume, so a pod is admitted
			// even before its namespace's default ServiceAccount exists (as
			// in envtest). PodSecurity and every other default plugin stay on.
			"--disable-admission-plugins=ServiceAccount",
		)
	}
	// With a real node, pods reach the API server through the kubernetes
	// Service, whose endpoint is the bridge address, with the token the
	// ServiceAccount admission plugin mounts; logs and exec go to kubelet
	// with a client certificate.
	return append(args,
		"--bind-address="+bridgeIP,
		"--advertise-address="+bridgeIP,
		"--kubelet-client-certificate="+k.path(kubeletClientCertFile),
		"--kubelet-client-key="+k.path(kubeletClientKeyFile),
		"--kubelet-certificate-authority="+k.path(caCertFile),
		"--kubelet-preferred-address-types=InternalIP",
	)
}

// servingArgs are the flags that make a component serve /healthz on
// 127.0.0.1 with the cluster's certificate, so the launcher can tell when it
// is up, and delegate authentication to the API server.
func servingArgs(l layout, c Component, port int, k *pki) []string {
	kc := l.componentKubeconfig(c)
	return []string{
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(port),
		"--cert-dir=" + l.scratch(c),
		"--tls-cert-file=" + k.path(servingCertFile),
		"--tls-private-key-file=" + k.path(servingKeyFile),
		"--authentication-kubeconfig=" + kc,
		"--authorization-kubeconfig=" + kc,
		// The API server has no front proxy (requestheader) CA; without
		// this the component logs an error about it every few seconds.
		"--authentication-skip-lookup=true",
	}
}

func controllerManagerArgs(l layout, p ports, k *pki) []string {
	return append(servingArgs(l, ControllerManager, p.controllerManager, k),
		"--kubeconfig="+l.componentKubeconfig(ControllerManager),
		// Every default controller: deployments, replica sets, garbage
		// collector, namespaces, endpoint slices, disruption budgets, service
		// accounts, node lifecycle and the rest.
		"--controllers=*",
		"--leader-elect=false",
		"--use-service-account-credentials=false",
		fmt.Sprintf("--kube-api-qps=%d", clientQPS),
		fmt.Sprintf("--kube-api-burst=%d", clientBurst),
		// Without these the token, root CA publisher and CSR signing
		// controllers stay off, and tests of those APIs would hang.
		"--service-account-private-key-file="+k.path(saKeyFile),
		"--root-ca-file="+k.path(caCertFile),
		"--cluster-signing-cert-file="+k.path(caCertFile),
		"--cluster-signing-key-file="+k.path(caKeyFile),
	)
}

func schedulerArgs(l layout, p ports, k *pki) []string {
	return append(servingArgs(l, Scheduler, p.scheduler, k),
		"--config="+schedulerConfigPath(l))
}

func schedulerConfigPath(l layout) string {
	return filepath.Join(l.config(), "kube-scheduler.yaml")
}

// schedulerConfig sets the client rate limits; kube-scheduler has no flags
// for them once a configuration file is used.
func schedulerConfig(l layout) string {
	return fmt.Sprintf(`apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: %q
  qps: %d
  burst: %d
leaderElection:
  leaderElect: false
`, l.componentKubeconfig(Scheduler), clientQPS, clientBurst)
}

func kwokArgs(l layout, stagesFile string) []string {
	return []string{
		"--kubeconfig=" + l.componentKubeconfig(Kwok),
		"--config=" + stagesFile,
		"--manage-nodes-with-annotation-selector=" + fakeNodeAnnotation + "=" + fakeNodeValue,
		"--cidr=" + podCIDR,
	}
}

// containerdArgs runs containerd with its configuration file.
func containerdArgs(l layout) []string {
	return []string{"--config=" + l.containerdConfig(), "--log-level=info"}
}

// kubeletArgs are the flags kubelet has no configuration field for.
func kubeletArgs(l layout) []string {
	return []string{
		"--config=" + l.kubeletConfig(),
		"--kubeconfig=" + l.componentKubeconfig(Kubelet),
		"--hostname-override=" + RealNodeName,
		"--node-ip=" + bridgeIP,
		"--root-dir=" + l.kubeletRoot(),
		"--cert-dir=" + filepath.Join(l.kubeletRoot(), "pki"),
		"--v=2",
	}
}

// kubeProxyArgs runs kube-proxy with its configuration file.
func kubeProxyArgs(l layout) []string {
	return []string{"--config=" + l.kubeProxyConfig(), "--v=2"}
}
