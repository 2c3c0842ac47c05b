/*
Command local-cluster starts, stops and reports the developer's local
cluster (package hack/local-cluster/localcluster): the cluster of make run,
make local-cluster and make local-cluster-down.

	local-cluster up     [--dir .local-cluster] [--bin-dir bin/k8s/<version>] [--node auto|real|kwok] [--packages "runc ..."] [--fresh]
	local-cluster down   [--dir ...] [--bin-dir ...]
	local-cluster status [--dir ...]
	local-cluster node   [--dir ...] [--node ...] [--packages ...]
	local-cluster run    [--dir ...] [--bin-dir ...] [--nodes N] [--real-node] [--fresh] [--stages file]

up starts the cluster in the background, in a session of its own, and
returns once it is ready; it prints which node runs the pods and why, how
many Memcached a kept cluster restored, and

	export KUBECONFIG=<absolute path of <dir>/kubeconfig>

The cluster keeps its objects in --dir across a down and an up; --fresh
starts it empty. --node auto, the default, gives the real node (kubelet,
containerd, runc: memcached pods really serve) wherever it can run: on
Linux, as root, with the --packages installed or apt-get to install them,
and no other cluster's real node on the machine. Otherwise kwok's fake node
runs the pods, and up says what to change. A running cluster keeps its node.

down stops it; no process, mount, network interface or iptables rule of it
is left. With none running, it removes what a real node whose launcher was
killed left on the machine.

status prints whether it runs, with which node, and whether its API server
is ready; its exit status is 3 when the cluster does not run.

node prints up's choice of node on one line, the kind, a space and why, for
make to build the real node's binaries only when they are used.

run is what up starts: the cluster in the foreground until SIGINT or
SIGTERM. With the real node, the images of the pods the operator makes are
imported into it: memcached built from Debian's package as
localhost/memcached:debian, for the operator's RELATED_IMAGE_MEMCACHED, the
TLS sidecar built from this tree as localhost/memcached-tls-reloader:test,
for RELATED_IMAGE_TLS_RELOADER, and prometheus/memcached_exporter built from
its Go module (the version hack/tools/memcached-exporter pins) as
localhost/memcached-exporter:test, for RELATED_IMAGE_MEMCACHED_EXPORTER.
Once the cluster is ready it writes <dir>/kubeconfig and <dir>/pid (its own
process id), which up waits for; when it has stopped it removes the pid
file. Component logs are in <dir>/logs, the launcher's in
<dir>/local-cluster.log.
*/
package main
