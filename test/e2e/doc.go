/*
Package e2e is the end-to-end suite: one local cluster, started once per
run, whose pods run on the real node (kubelet, containerd, runc, the CNI
bridge, kube-proxy and CoreDNS; see localcluster.Options.RealNode) unless
they tolerate the taint of its one kwok node, with the suite's images
imported (nothing is pulled) and cert-manager's controllers and CA
injector running in the test process (test/framework/certmanager). Every
top-level container works in namespaces of its own (the DNS specs in
default, as the README does, removing what they put there) and removes
what it installed cluster-wide when it ends; labels (labels_test.go)
select a part: make test-e2e LABELS=tls.

With E2E_CLUSTER=existing the suite runs on the cluster of KUBECONFIG
instead, started by anyone (provider_test.go): it imports nothing, leaves
out the specs labelled host, which need its own cluster on this host, and
names them when it ends.

The operator's `kubectl apply` install path, with cert-manager issuing and
renewing its certificates:

  - With no cluster: `kustomize build config/default` decoded into
    cert-manager's API types; each Certificate names its Service and lands
    in the manager's volume.
  - On the local cluster: cert-manager's controllers and CA injector run in the test process
    (test/framework/certmanager), config/default is applied with
    bin/kubectl, the operator
    binary runs on the host with the issued
    certificate, the API server calls its webhooks through the injected CA,
    and a renewal reaches the webhook without a restart.
  - The operator's ServiceMonitor: with the Prometheus Operator's CRDs
    installed (generated from its API module, `make prometheus-operator-crds`),
    `kubectl apply -k config/prometheus` is accepted, and a scrape made
    only from what the ServiceMonitor names (the token of its
    authorization Secret, the CA of its tlsConfig Secret, its serverName,
    the port of the Service it selects) gets 200 over verified TLS, with
    memcached_operator_memcached_blocked of a Memcached blocked by a name
    clash; another server name fails verification.

The "kubectl apply with cert-manager" container runs the operator on the
host and stands in for kubelet in two ways, each said where it happens: it
copies the certificate Secret to the files the operator reads, as kubelet
does for a mounted Secret (certs/certstest), and it routes the
API server's webhook calls to the host. The "operator as a pod" container
runs the same install with the operator image and no stand-in.

What only a real node shows: that the memcached the operator deploys starts
and serves, and that the operator image runs as a pod.

  - With the operator on the host (local webhooks): a
    Memcached of size 3 gets three pods Running and Ready on the real node,
    each storing and returning an item through its pod IP with 64 MiB for
    items; the processes run as UID 11211 with no capabilities, seccomp,
    no new privileges and a read-only root in a restricted namespace; a
    memcached killed in its pod is restarted by kubelet while the
    Memcached's readyReplicas drops and the Service's addresses stay;
    scaling 3 -> 5 -> 1 keeps status.nodes equal to the running pods; a
    restart of the operator with a proxy (credentials in the URL) puts the
    six proxy variables into every memcached process's environment, a
    restart without takes them out, a restart with the same values changes
    nothing, each change is exactly one rollout; RELATED_IMAGE_MEMCACHED
    set to a second tag rolls every Memcached once onto it, the Service's
    addresses changing one at a time and never fewer than its size; a Memcached
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
  - TLS, with the operator on the host (node_tls_test.go, docs/tls.md): a
    renewed certificate is served in place, keeping pods, containers and
    items; a Memcached applied from docs/tls/cert-manager.yaml gets its own
    Certificate, which cert-manager's controllers issue and renew.
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
  - operator-sdk scorecard with the bundle's own configuration
    (bundle/tests/scorecard/config.yaml: the basic and olm suites), its
    scorecard-test image built from the operator-sdk module bin/operator-sdk
    is built from, its pods in a namespace that enforces Pod Security
    restricted, as OpenShift's restricted-v2 would have them; every
    configured test must pass.

The operator's faults (faults_*_test.go, docs/reliability.md): the
operator binary runs as a real process against the cluster, each spec's
own with WATCH_NAMESPACE set to a namespace of its own, its Memcached's
pods on the cluster's tainted kwok node (fakeMemcached), which makes them
Ready at once: hundreds of them would not fit the real node.

  - kill -9 of the operator at FAULT_KILLS random moments of
    a FAULT_CRS-Memcached rollout, each followed by a restart; every
    Memcached converges with exactly its own Deployment, Service and PDB.
  - kube-apiserver, and separately etcd, stopped and
    started again mid-rollout; the same operator process converges.
  - two replicas with leader election; the leader
    is killed and the standby takes over, and the standby never reconciles
    while the leader lives.
  - hand edits and deletions of the owned objects are undone;
    a hand-added annotation stays.
  - with the operator gone and the fail-closed webhook
    configurations left, every Memcached write is refused.
  - the operator started as OLM's first rollout
    of an install or upgrade starts it, without its Subscription's
    config.env (operator-lifecycle-manager #2100), still validates with the
    Subscription's size policy and deploys its memcached image.
  - malformed AdmissionReview bodies posted straight to
    the webhook server are refused without a crash or unbounded memory.
  - a flood of large reviews posted straight to the webhook server
    leaves the operator alive, under half its memory limit, and admitting
    Memcached writes.

The operator's security claims (security_*_test.go, labelled security):
least-privilege RBAC, Pod Security, authenticated metrics, TLS versions
and proxy credentials kept out of everything but the Deployments.

Plain Go tests, no cluster:

  - The policy the operator's RBAC must meet: no wildcard verbs,
    resources, API groups or non-resource URLs; no access to Secrets (the
    operator reads its certificates from files and never calls the Secret
    API); no escalate, bind or impersonate. The checker is proven to flag
    each of those, also through the manifest reader, then runs over
    config/rbac, the ClusterRoles in bundle/manifests and the CSV's
    permissions and clusterPermissions.
  - The operator-log check finds the proxy credentials (plain or as a
    Basic header) and RBAC refusals.

On the cluster, in the "security" container (security_test.go), the
operator runs as the ServiceAccount config/default
creates, with only the roles config/default binds to it (plus, for local
webhook mode, the right to write webhook configurations), secure metrics,
webhooks served from 127.0.0.1 and proxy credentials in its environment:

  - RBAC is enough (it leads, reconciles, writes
    status and events, and no request of its was refused) and, asked through
    SubjectAccessReviews, grants no Secret access or escalation.
  - in namespaces enforcing the restricted Pod Security
    profile, the memcached pods and the manager pod (the Deployment of
    `kustomize build config/default` and the CSV's) are admitted without
    warnings and become Ready; a privileged Deployment is the control that
    shows refusals are seen.
  - /metrics refuses no token (401), a forged token and a
    ServiceAccount without the metrics-reader ClusterRole (403), and answers
    one with it (200).
  - the webhook and metrics servers refuse TLS 1.0 and 1.1,
    accept 1.2 and 1.3, and negotiate HTTP/2 only with --enable-http2.
  - the proxy credentials reach the memcached Deployments and
    nothing else: no Event, Memcached, Service or PodDisruptionBudget, and
    (checked again over every operator's whole log when the suite ends) no
    log line, even when a write fails.

The Operator Lifecycle Manager install path (olm_*_test.go, labelled olm):
the committed bundle/ is installed by a real OLM (v0) in every install
mode, with an OpenShift cluster proxy, and upgraded while admission is
probed without pause. OLM runs only while these specs do; the namespaces
and webhook configurations its installs leave are removed after them.

OLM's olm and catalog operators run as host processes against the cluster;
the catalog is bundle/ rendered by `make catalog` (image fields empty, so no
unpack Job) and served by `opm serve` on a loopback port. Everything OLM
deploys runs for real on the real node: the operator pods, from the image
package images builds from this tree (imported under the names both CSVs
give it), with OLM's certificate Secret mounted by kubelet and their
ServiceAccount's token; the API server calls their webhooks through OLM's
Service; the memcached pods they create run the release shipped, which each
Subscription's config.env names, as a disconnected install names a mirror.

In order, in one cluster (OLM refuses an AllNamespaces install beside any
other):

  - AllNamespaces: the InstallPlan and CSV; the proxy, WATCH_NAMESPACE and
    the memcached image in the manager process's environment; the webhook
    configurations with OLM's CA and its certificate mounted; the pod serving
    that certificate, a bad Memcached refused through the webhook, a good
    one defaulted and reconciled into serving pods with the proxy; no proxy
    password in the operator's log; its rules granted in every namespace,
    the leader election's and the OLM-only ones (OLM's Secret,
    ReplicaSets, Subscriptions) in its own namespace alone; the NetworkPolicies the manager keeps there,
    selecting its pod and admitting only its webhook and metrics ports.
  - Upgrade: a second bundle version replacing the first, while a probe
    makes dry-run creates that admission must admit and must refuse, 20
    rounds a second; every answer must be the one the content calls for.
    The old CSV, its webhooks and its pod go, the new pod serves, the
    Memcached keeps its pods.
  - The AllNamespaces install is removed with its namespaces; then two
    OwnNamespace installs, a SingleNamespace and a MultiNamespace install
    side by side: each CSV succeeds, each operator watches exactly its
    OperatorGroup's namespaces, its webhooks are called only there, its
    ServiceAccount may act there and nowhere else (the API server's
    authorizer answers), cluster-wide it holds only the metrics reviews
    and the read of the cluster's TLS security profile,
    and the leader election's and OLM-only rules hold in its own
    namespace and none of its targets; each keeps its OLM Secret and has its NetworkPolicies in its
    own namespace alone;
    each reconciles and refuses in its namespaces; a namespace no install
    watches gets neither webhook nor reconcile, while the CRD's schema still
    refuses what memcached cannot run; an install overlapping another's
    namespaces is refused by OLM with its reason.

Beside them, in the same cluster: a disconnected install. The images the
committed bundle names are pushed to in-process registries that stand in for
quay.io, docker.io and example.com (test/framework/registrymirror), the real
node's containerd pulls those hosts' images from them alone (hosts.toml,
no fallback), and the release bundle (`make bundle USE_IMAGE_DIGESTS=true`,
test/framework/releasebundle) is installed from its own catalog with no
Subscription override: the operator pod, and a Memcached's memcached, TLS
sidecar and exporter containers, each run the bundle's digest, reported as
their imageID, and the mirror served each of those manifests by digest and
was asked for nothing else.

It needs root. `make test-e2e` builds what it runs (kubelet, kube-proxy,
containerd, the control plane, operator-sdk, olm, catalog, opm, crane) and installs runc, the CNI
plugins, iptables and memcached from Debian; images are built without
Docker by package images.
*/
package e2e
