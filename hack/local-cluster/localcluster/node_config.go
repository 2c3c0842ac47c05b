package localcluster

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	componentbaseconfigv1alpha1 "k8s.io/component-base/config/v1alpha1"
	kubeproxyconfigv1alpha1 "k8s.io/kube-proxy/config/v1alpha1"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"
)

// The real node's files, all under <Dir>/node, so that removing the cluster
// directory removes them and a leftover mount is easy to find.
func (l layout) node() string            { return filepath.Join(l.dir, "node") }
func (l layout) containerdRoot() string  { return filepath.Join(l.node(), "containerd", "root") }
func (l layout) containerdState() string { return filepath.Join(l.node(), "containerd", "state") }
func (l layout) containerdConfig() string {
	return filepath.Join(l.node(), "containerd", "config.toml")
}
func (l layout) registryHosts() string    { return filepath.Join(l.node(), "containerd", "certs.d") }
func (l layout) runcRoot() string         { return filepath.Join(l.node(), "runc") }
func (l layout) containerdSocket() string { return filepath.Join(l.node(), "containerd.sock") }
func (l layout) cniConfDir() string       { return filepath.Join(l.node(), "cni", "net.d") }
func (l layout) cniIPAMDir() string       { return filepath.Join(l.node(), "cni", "ipam") }
func (l layout) kubeletRoot() string      { return filepath.Join(l.node(), "kubelet") }
func (l layout) kubeletConfig() string    { return filepath.Join(l.node(), "kubelet.yaml") }
func (l layout) kubeProxyConfig() string  { return filepath.Join(l.node(), "kube-proxy.yaml") }
func (l layout) resolvConf() string       { return filepath.Join(l.node(), "resolv.conf") }
func (l layout) nodeTmp() string          { return filepath.Join(l.node(), "tmp") }
func (l layout) images() string           { return filepath.Join(l.node(), "images") }

// cniBinDir is where Debian's containernetworking-plugins package puts the
// bridge, host-local and loopback plugins.
const cniBinDir = "/usr/lib/cni"

// containerdConfig is containerd's configuration (version 3, containerd
// 2.x): state, sockets and runc's state under the node directory, the
// sandbox image the launcher imports, the CNI bridge network, and a registry
// configuration that makes every pull fail on this machine: the _default
// hosts.toml names a push-only server, so containerd never resolves or dials
// a registry (an image not imported is an error, never a download).
func containerdConfig(l layout) string {
	return fmt.Sprintf(`version = 3
root = %q
state = %q
# NRI would create /var/run/nri; opt would create /opt/containerd.
disabled_plugins = ["io.containerd.nri.v1.nri", "io.containerd.internal.v1.opt"]

[grpc]
  address = %q

[plugins.'io.containerd.cri.v1.images']
  snapshotter = "overlayfs"
  [plugins.'io.containerd.cri.v1.images'.pinned_images]
    sandbox = %q
  [plugins.'io.containerd.cri.v1.images'.registry]
    config_path = %q

[plugins.'io.containerd.cri.v1.runtime']
  # The sandbox may not lower its OOM score here; without this runc fails
  # every pod sandbox ("can't get final child's PID from pipe: EOF").
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  [plugins.'io.containerd.cri.v1.runtime'.cni]
    bin_dirs = [%q]
    conf_dir = %q
  [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
    SystemdCgroup = false
    Root = %q

[plugins.'io.containerd.grpc.v1.cri']
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
`, l.containerdRoot(), l.containerdState(), l.containerdSocket(), SandboxImage, l.registryHosts(),
		cniBinDir, l.cniConfDir(), l.runcRoot())
}

// registryHostsFile is <registryHosts>/_default/hosts.toml: every registry's
// only host is a loopback address that may only be pushed to, so a pull
// finds no host to resolve from and fails without a connection.
const registryHostsFile = `server = "http://127.0.0.1:1"
capabilities = ["push"]
`

// registryMirrorHostsFile is <registryHosts>/<host>/hosts.toml for a
// mirrored host: the mirror is the host's server, so containerd resolves
// and pulls there alone (it adds ?ns=<host> to each request), never at the
// host itself.
func registryMirrorHostsFile(endpoint string) string {
	return fmt.Sprintf("server = %q\n\n[host.%q]\n  capabilities = [\"pull\", \"resolve\"]\n", endpoint, endpoint)
}

// cniConfig is the pod network: the bridge the launcher made, with pod
// addresses from host-local IPAM and the bridge's address as gateway. No
// masquerade: nothing routes pod traffic off this machine.
func cniConfig(l layout) (string, error) {
	conf := map[string]any{
		"cniVersion": "1.0.0",
		"name":       "localcluster",
		"plugins": []any{
			map[string]any{
				"type":        "bridge",
				"bridge":      bridgeName,
				"isGateway":   true,
				"ipMasq":      false,
				"hairpinMode": true,
				"ipam": map[string]any{
					"type":    "host-local",
					"ranges":  []any{[]any{map[string]any{"subnet": bridgeCIDR, "gateway": bridgeIP}}},
					"routes":  []any{map[string]any{"dst": "0.0.0.0/0"}},
					"dataDir": l.cniIPAMDir(),
				},
			},
		},
	}
	b, err := json.MarshalIndent(conf, "", "  ")
	return string(b), err
}

// KubeletSyncFrequency is how often the real node's kubelet syncs each pod,
// which is when it refreshes the pod's Secret volumes: a renewed
// certificate reaches the files a pod mounts within 1.5 times this (the
// kubelet adds up to 50 % jitter). A tenth of the kubelet's default minute,
// so that the suites wait seconds, not minutes, for each Secret change.
const KubeletSyncFrequency = 10 * time.Second

// nodePorts are the real node's listening ports.
type nodePorts struct {
	kubelet, kubeletHealthz, kubeProxyHealthz, kubeProxyMetrics, coreDNSReady int
}

// kubeletConfig is the kubelet's configuration: serving on the bridge
// address (the API server reaches it there for logs and exec) with the
// cluster CA's certificate, authenticating the API server by client
// certificate and everyone else by token review, cgroup v1 allowed with the
// cgroupfs driver containerd uses, and nothing that would evict pods or
// collect images on a busy test machine. Pods resolve names through the
// cluster's CoreDNS (clusterDNS); see resolvConf for the host's resolver.
func kubeletConfig(l layout, p nodePorts, k *pki) (string, error) {
	c := kubeletconfigv1beta1.KubeletConfiguration{
		TypeMeta:                    metav1.TypeMeta{APIVersion: "kubelet.config.k8s.io/v1beta1", Kind: "KubeletConfiguration"},
		FailCgroupV1:                ptr.To(false),
		CgroupDriver:                "cgroupfs",
		ContainerRuntimeEndpoint:    "unix://" + l.containerdSocket(),
		FailSwapOn:                  ptr.To(false),
		Address:                     bridgeIP,
		Port:                        int32(p.kubelet),
		ReadOnlyPort:                0,
		HealthzBindAddress:          "127.0.0.1",
		HealthzPort:                 ptr.To(int32(p.kubeletHealthz)),
		TLSCertFile:                 k.path(kubeletCertFile),
		TLSPrivateKeyFile:           k.path(kubeletKeyFile),
		RotateCertificates:          false,
		ServerTLSBootstrap:          false,
		EnforceNodeAllocatable:      []string{},
		EvictionHard:                map[string]string{"memory.available": "0%", "nodefs.available": "0%", "imagefs.available": "0%"},
		ImageGCHighThresholdPercent: ptr.To(int32(100)),
		ImageGCLowThresholdPercent:  ptr.To(int32(99)),
		ResolverConfig:              ptr.To(l.resolvConf()),
		ClusterDNS:                  []string{ClusterDNSIP},
		ClusterDomain:               ClusterDomain,
		MakeIPTablesUtilChains:      ptr.To(false),
		SerializeImagePulls:         ptr.To(true),
		MaxPods:                     110,
		StaticPodPath:               "",
		Authentication: kubeletconfigv1beta1.KubeletAuthentication{
			X509:      kubeletconfigv1beta1.KubeletX509Authentication{ClientCAFile: k.path(caCertFile)},
			Webhook:   kubeletconfigv1beta1.KubeletWebhookAuthentication{Enabled: ptr.To(true)},
			Anonymous: kubeletconfigv1beta1.KubeletAnonymousAuthentication{Enabled: ptr.To(false)},
		},
		Authorization: kubeletconfigv1beta1.KubeletAuthorization{Mode: kubeletconfigv1beta1.KubeletAuthorizationModeWebhook},
		// Pods get ten seconds to stop; a test cluster should not linger.
		ShutdownGracePeriod:       metav1.Duration{},
		NodeStatusUpdateFrequency: metav1.Duration{Duration: 10 * time.Second},
		SyncFrequency:             metav1.Duration{Duration: KubeletSyncFrequency},
	}
	b, err := yaml.Marshal(c)
	return string(b), err
}

// kubeProxyConfig runs kube-proxy in iptables mode for the pod network: its
// health and metrics servers on loopback, NodePorts only on the bridge
// address, no conntrack sysctl changed, and no route_localnet.
func kubeProxyConfig(l layout, p nodePorts) (string, error) {
	c := kubeproxyconfigv1alpha1.KubeProxyConfiguration{
		TypeMeta: metav1.TypeMeta{APIVersion: "kubeproxy.config.k8s.io/v1alpha1", Kind: "KubeProxyConfiguration"},
		ClientConnection: componentbaseconfigv1alpha1.ClientConnectionConfiguration{
			Kubeconfig: l.componentKubeconfig(KubeProxy), QPS: clientQPS, Burst: clientBurst,
		},
		HostnameOverride:   RealNodeName,
		BindAddress:        bridgeIP,
		HealthzBindAddress: "127.0.0.1:" + strconv.Itoa(p.kubeProxyHealthz),
		MetricsBindAddress: "127.0.0.1:" + strconv.Itoa(p.kubeProxyMetrics),
		Mode:               "iptables",
		ClusterCIDR:        bridgeCIDR,
		NodePortAddresses:  []string{bridgeIP + "/32"},
		IPTables: kubeproxyconfigv1alpha1.KubeProxyIPTablesConfiguration{
			LocalhostNodePorts: ptr.To(false),
			SyncPeriod:         metav1.Duration{Duration: 30 * time.Second},
			MinSyncPeriod:      metav1.Duration{Duration: time.Second},
		},
		Conntrack: kubeproxyconfigv1alpha1.KubeProxyConntrackConfiguration{
			MaxPerCore: ptr.To(int32(0)),
			Min:        ptr.To(int32(0)),
		},
	}
	b, err := yaml.Marshal(c)
	return string(b), err
}

// resolvConf stands for the host's resolver, which is off limits: kubelet
// gives it to pods with dnsPolicy Default (and adds its search domains,
// none, to everyone else's), so their queries go to their own loopback,
// where nothing answers. Pods with the default policy, ClusterFirst, ask
// CoreDNS.
const resolvConf = "nameserver 127.0.0.1\noptions ndots:1\n"
