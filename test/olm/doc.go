/*
Package olm proves the Operator Lifecycle Manager install path end to end:
the committed bundle/ is installed by a real OLM (v0) Subscription on a local
cluster (test/framework/localcluster) that has an OpenShift cluster-wide proxy, and then
upgraded to a second bundle version.

Nothing runs in a container. OLM's olm and catalog operators run as host
processes against the local cluster; the catalog is bundle/ rendered by
`make catalog` (image fields empty, so no unpack Job) and served by
`opm serve` on a loopback port; the operator pod that OLM deploys is a kwok
fake pod, and the operator itself runs on the host the way that pod would run
it: its arguments, its environment and OLM's certificate Secret, taken from
the Deployment OLM made.

The suite checks, from the cluster, what OLM did (InstallPlan, CSV, the proxy
and WATCH_NAMESPACE in the Deployment, the webhook configurations and their
CA, the certificate mount), then what the operator does with it (the webhook
certificate, admission through the API server, proxy variables in memcached
pods, no credentials in its log), then an upgrade that keeps the memcached
pods.

Run it with `make test-olm`, which builds the control plane, olm, catalog and
opm and passes their paths in KUBEBUILDER_ASSETS, OLM_BIN_DIR, OLM_CRDS_DIR,
OPENSHIFT_PROXY_CRD and OPM; without them the suite skips. The work directory
(cluster, OLM, opm and operator logs) is printed and kept when a spec fails.
*/
package olm
