/*
Command local-cluster runs a local control plane (package hack/local-cluster/localcluster)
until it receives SIGINT or SIGTERM.

	local-cluster [--dir .local-cluster] [--bin-dir bin/k8s/<version>] [--nodes N] [--real-node] [--stages <bin-dir>/kwok-stages.yaml]

With --real-node (root only) the cluster has a node that runs pods for real
(kubelet, containerd, kube-proxy), and the images of the pods the operator
makes are imported into it: memcached built from Debian's package as
localhost/memcached:debian, for the operator's RELATED_IMAGE_MEMCACHED,
the TLS sidecar built from this tree as
localhost/memcached-tls-reloader:test, for RELATED_IMAGE_TLS_RELOADER, and
prometheus/memcached_exporter built from its Go module (the version
hack/tools/memcached-exporter pins) as localhost/memcached-exporter:test,
for RELATED_IMAGE_MEMCACHED_EXPORTER.

Once the cluster is ready it writes <dir>/kubeconfig and <dir>/pid (its own
process id), and prints

	export KUBECONFIG=<absolute path of <dir>/kubeconfig>

on standard output. The pid file therefore doubles as a readiness marker. On
SIGINT or SIGTERM it stops every process of the cluster, waits for them,
removes the pid file and exits 0; when it has exited, nothing of the cluster
is left running. A second instance on the same --dir is refused while the
first is alive.

Progress and errors go to standard error; component logs are in <dir>/logs.
*/
package main
