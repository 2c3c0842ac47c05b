/*
Package node proves on the local cluster's real node (kubelet, containerd,
runc, the CNI bridge and kube-proxy; see localcluster.Options.RealNode) what
kwok's pods cannot: that the memcached the operator deploys starts and
serves, and that the operator image runs as a pod.

  - With the operator on the host (local webhooks): a
    Memcached of size 3 gets three pods Running and Ready on the real node,
    each storing and returning an item through its pod IP with 64 MiB for
    items; the processes run as UID 11211 with no capabilities, seccomp,
    no new privileges and a read-only root in a restricted namespace; a
    memcached killed in its pod is restarted by kubelet while the pod leaves
    the Service's EndpointSlice and the Memcached's readyReplicas drops;
    scaling 3 -> 5 -> 1 keeps status.nodes equal to the running pods; a
    restart of the operator with a proxy (credentials in the URL) puts the
    six proxy variables into every memcached process's environment, a
    restart without takes them out, a restart with the same values changes
    nothing, each change is exactly one rollout; RELATED_IMAGE_MEMCACHED
    set to a second tag rolls every Memcached once onto it; a Memcached
    with memory 256Mi and maxItemSize 4Mi stores and returns a 3 MiB item,
    which one at the defaults refuses.
  - Metrics, with the operator on the host: each pod of a Memcached of
    size 2 with monitoring on runs the exporter sidecar (prometheus/
    memcached_exporter, the image built from its Go module), which answers
    memcached_up 1 on the pod IP's port 9150; after N sets and M gets (H
    hits) through one pod's IP, that pod's memcached_commands_total for
    set/hit, get/hit and get/miss grew by exactly N, H and M-H, the other
    pod's by nothing, and scrapes alone count as no command. The same with
    TLS on: the commands go over TLS to port 11211, the exporter reads
    memcached's plain listener on loopback.
  - Faults of the node under a Memcached of size 3: containerd and the
    kubelet each stopped and started, and killed and started, while every
    pod keeps answering on connections opened before, with its items, no
    pod replaced or restarted and the status Available throughout;
    `kubectl drain` evicts one pod, the PDB refuses the next while its
    replacement cannot be scheduled, and after the uncordon the Memcached
    is Available again.
  - `kustomize build config/default | kubectl
    apply` with cert-manager's controllers in the test process and the
    operator image built from this tree: the manager pod is Ready on the
    real node and reaches the API server through the kubernetes Service;
    the API server calls its webhooks through their Service and refuses a
    bad Memcached; a good one becomes serving memcached pods; /metrics
    answers a bound ServiceAccount token and refuses an anonymous caller.
  - The cluster's DNS, on the README's path (the sample applied with
    kubectl, the operator on the host): a pod's resolv.conf names CoreDNS
    and the cluster's search path; the sample's headless Service name
    answers with its three pods' addresses and each pod's own name with its
    address; the README's client command, busybox's nc in a pod, stores and
    reads an item through the name status.endpoint gives; a name outside
    cluster.local is refused, not forwarded; no pod gets a
    MissingClusterDNS event.
  - `make local-cluster LOCAL_CLUSTER_NODE=real` runs
    a pod for real, and `make local-cluster-down` leaves no process, mount,
    network interface or iptables rule behind; so does the suite's own
    cluster when it stops.

It needs root. `make test-node` builds what it runs (kubelet, kube-proxy,
containerd, the control plane) and installs runc, the CNI plugins, iptables
and memcached from Debian; images are built without Docker by package images
and imported into containerd, since nothing may be pulled.
*/
package node
