/*
Package olm proves the Operator Lifecycle Manager install path end to end:
the committed bundle/ is installed by a real OLM (v0) in every install mode on
a local cluster (test/framework/localcluster) that has an OpenShift cluster
proxy and a real node, and upgraded while admission is probed without pause.

OLM's olm and catalog operators run as host processes against the cluster;
the catalog is bundle/ rendered by `make catalog` (image fields empty, so no
unpack Job) and served by `opm serve` on a loopback port. Everything OLM
deploys runs for real on the real node: the operator pods, from the image
package images builds from this tree (imported under the names both CSVs
give it), with OLM's certificate Secret mounted by kubelet and their
ServiceAccount's token; the API server calls their webhooks through OLM's
Service; the memcached pods they create run Debian's memcached, which each
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
    ReplicaSets, Subscriptions) in its own namespace alone; the bundle's NetworkPolicies there, selecting
    the manager pod and admitting only its webhook and metrics ports.
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

Run it with `make test-olm` (root: the real node), which builds the node,
the control plane, olm, catalog and opm and passes their paths in
KUBEBUILDER_ASSETS, OLM_BIN_DIR, OLM_CRDS_DIR, OPENSHIFT_PROXY_CRD and OPM;
without them the suite fails, naming what is missing. The work directory
(cluster and node logs, OLM's and opm's logs) is printed and kept when a
spec fails.
*/
package olm
