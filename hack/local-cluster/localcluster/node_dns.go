package localcluster

import (
	"fmt"
	"path/filepath"
)

// CoreDNS is the cluster's DNS server, a component of the real node: pods
// find Services and their endpoints by name as on any cluster, the headless
// Service of a Memcached giving one name for all its pods and one for each.
// It is built by make node from hack/tools/kubernetes/coredns, with only the
// plugins the Corefile below uses.
const CoreDNS Component = "coredns"

// ClusterDomain is the real node's DNS domain, kubelet's and CoreDNS's.
const ClusterDomain = "cluster.local"

// ClusterDNSIP is where the real node's pods send their queries (kubelet's
// clusterDNS): CoreDNS runs on the host, like kube-proxy, and listens on
// the bridge's gateway address, which every pod reaches directly, as it
// reaches the API server. Not a kube-dns ClusterIP in front of it, as kubeadm has: that
// would make every query depend on kube-proxy's rules (pods started before
// its first sync, or while it restarts, would time out), and its Service
// and EndpointSlice would live in etcd, where a kept state would carry them
// into a cluster without a real node, pointing at an address nobody serves.
// What is lost is a kube-dns Service for tools that look DNS up by it.
const ClusterDNSIP = bridgeIP

func (l layout) corefile() string { return filepath.Join(l.node(), "Corefile") }

// corefile serves cluster.local, and the reverse zones for Services' and
// pods' addresses, from the API server, on the bridge address only: a
// query for any other name is refused, since nothing may be forwarded off
// the machine. `pods insecure` answers a-b-c-d.<namespace>.pod names as
// kubeadm's CoreDNS does; the kubernetes plugin answers from its informers'
// memory, so no cache plugin would save anything and it would only serve
// a scaled Service's old endpoints longer. Every query is logged, to
// logs/coredns.log. ready answers 200 on loopback once the plugin has
// synced with the API server.
func corefile(l layout, readyPort int) string {
	return fmt.Sprintf(`%[1]s:53 in-addr.arpa:53 ip6.arpa:53 {
    bind %[2]s
    errors
    log
    ready 127.0.0.1:%[3]d
    kubernetes %[1]s in-addr.arpa ip6.arpa {
        kubeconfig %[4]q %[5]s
        pods insecure
    }
}
`, ClusterDomain, ClusterDNSIP, readyPort, l.componentKubeconfig(CoreDNS), contextName)
}

// coreDNSArgs runs CoreDNS with its Corefile.
func coreDNSArgs(l layout) []string {
	return []string{"-conf", l.corefile()}
}
