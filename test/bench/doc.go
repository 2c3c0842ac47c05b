/*
Command bench measures the memcached-operator at scale on a local cluster:
how fast it converges, what it costs the API server, how much memory it
holds, and what its admission webhooks add to every create. It is a program,
not a test: it prints a table, writes docs/bench/results.json, the plot
docs/bench/converge.svg and the results section of docs/benchmarks.md
(from the results file), and fails when a scenario cannot
complete. The targets get a verdict computed here; a smoke run
also fails on a missed counted target (writes, idle reconciles), which the
machine's load cannot explain.

	go -C test run ./bench -n 1000                 # the published figures
	go -C test run ./bench -smoke                  # CI: every scenario, small
	go -C test run ./bench -n 100 -scenarios converge,idle -idle 30s
	go -C test run ./bench -scenarios memcached    # memcached's figures alone (make bench-memcached)
	go -C test run ./bench -scenarios memory       # memcached filled to its memory (make bench-memory)
	go -C test run ./bench -scenarios rollout      # a client's hit ratio through rollouts (make bench-rollout)
	go -C test run ./bench -render                 # docs/benchmarks.md and the plot from docs/bench/*.json

The memcached, memory and rollout scenarios run memcached for real, on a
real node (root); the others measure the operator on a cluster of fake
nodes. Each has a results file of its own (docs/bench/memcached.json,
docs/bench/memory.json, docs/bench/rollout.json, docs/bench/results.json) and a generated section of
docs/benchmarks.md, rewritten by a run that includes it, so that any can be
published without the others.

# What it runs

A local cluster (hack/local-cluster/localcluster: etcd, kube-apiserver,
kube-controller-manager, kube-scheduler and kwok, with enough fake nodes for
every pod the run makes), the Memcached CRD, and the operator built from this
tree with `go build`, run as its own process, so that its CPU time
(/proc/<pid>/stat) and resident memory (/proc/<pid>/status: VmRSS, and VmHWM
for the peak) are measured from outside. The operator runs with its default
flags (4 workers, 50 QPS), plain-HTTP metrics on loopback and no leader
election, and with the variables its Deployment sets from its resources
(MEMORY_LIMIT: bundle/'s CSV, as the kubelet would resolve it), so that it
runs as deployed; -operator-args adds flags.

# Scenarios

First, before the operator is built or any other cluster started:

  - memcached: a local cluster with the real node (kubelet, containerd,
    runc; see hack/local-cluster/localcluster) runs the pod the operator makes
    for a Memcached that sets only its size, its Deployment built by
    controllers.DesiredObjects from the spec the API server and the
    defaulting webhook would store (no operator process shares the CPU);
    the host runs the same memcached binary with the pod's command line,
    on loopback, with no CPU limit, in a cgroup of the same CPU weight as
    the node's kubepods (so that both compete alike with whatever else
    the machine runs). test/framework/memload sends
    each the same load (-memcached-connections connections, 90 % gets
    over 10,000 preloaded keys of 100 bytes) for -memcached-phase, host
    and pods in turn, -memcached-rounds times; the pod is reached at its
    IP on the node's bridge. Reported per memcached: ops/s, p50, p99,
    p99.9 and max latency (HDR histogram), memcached's CPU
    (/proc/<pid>/stat) and, for a pod, how many CFS periods of its
    container's cgroup were throttled; and the pod's ratios to the host.
  - memory: on the same node, the operator (built from this tree, on the
    host, its webhooks in local mode) makes the pods of a Memcached of
    size 1 for each of -memory-sizes (64Mi, 256Mi, 1Gi), every other
    field at its default, and of the first size again serving TLS, at
    each of -memory-tls-conns maxConnections (1024, the default, and
    4096). Each is filled (memfill.go): as many connections as memcached
    accepts, up to its maxConnections, are opened and held; two writers
    per memcached thread pipeline 100-byte items until memcached has
    evicted -memory-turnover of what it holds; then every connection at
    once sets an item of maxItemSize less 1 KiB and reads it back, until
    -memory-large-fill times the memory was written. With every
    connection still open, the bench reads the memcached container's
    memory cgroup (the peak since it started, the limit, failcnt, OOM
    kills, and the TCP buffers, which cgroup v1 counts apart once the
    bench turns that on), the container's restarts and last termination
    reason, and memcached's stats. The scenario fails when a memcached
    was OOM-killed or restarted, or never evicted; the peak within the
    memory request and 10 % under the limit is a target.
  - rollout: on the same node, the operator (built from this tree, on the
    host, measuring warmth every --warmup-interval, its default) makes the
    pods of a Memcached of size 3, once with spec.rollout.pacing Warmth and
    once with None (-rollout-timeout sets spec.rollout.warmupTimeout). A
    client (rollout_load.go) lists the ready addresses of the Service's
    EndpointSlices every 100 ms, what DNS answers for the headless Service;
    shards -rollout-keys keys over them by rendezvous hashing; stores every
    key; then reads keys of Zipf popularity (-rollout-zipf) at
    -rollout-rate gets per second, storing each key it misses, and counts
    hits per second. After -rollout-steady, a change of maxConnections
    rolls every pod; the load runs until -rollout-tail after the
    Deployment runs only new pods, all available. Reported per pacing: the
    hit ratio before the change, its lowest second after it, the rollout's
    length, the fewest addresses the client was given and how long each
    new pod waited, and why (its warm condition); the hit ratio over time
    is plotted in docs/bench/rollout.svg. The scenario fails when the
    client was given fewer addresses than pods; the lowest hit ratios'
    gap is a target.

Then, in this order, on one Memcached set in namespace "bench":

  - floor: before anything else, on a cluster of its own with as many fake
    nodes, and no operator: apply the Deployment, Service and PDB the
    operator would make for each of the -n Memcached
    (controllers.DesiredObjects, of the spec the API server and the
    defaulting webhook would store, without owner references) and wait
    until every Deployment is Available: what the cluster itself spends,
    in time and kube-apiserver CPU, on what the operator asks of it. The
    converge's time and kube-apiserver CPU are reported as ratios to it.
  - converge: create -n Memcached objects of -size (3) at once, through the
    operator's webhooks (served as in make run), and wait until every one
    is Available at that size; time, operator and kube-apiserver CPU
    seconds, peak RSS, kube-apiserver's histogram of the webhook calls, and
    the operator's API requests from the first create until it is idle
    again, with the writes per object. Go's profiles of the operator
    (its --pprof-bind-address on loopback) cover the same window: CPU in
    5-second slices, merged, and the heap once it settled; their top
    entries go into the results, the files into the work
    directory as cpu.pprof and heap.pprof. Profiling at 100 Hz costs the
    operator a few percent of CPU, which the window's CPU seconds include.
  - idle: the operator's writes over -idle (5m) in which nothing changes.
  - resize: set every object's size to -resize-to (5) at once, through the
    webhooks; time to converge, writes per object.
  - rss: restart the operator, let it reconcile the set and settle, sample
    its RSS for -rss-window; add -pods (10,000) pods that are not the
    operator's (Deployments of pause pods); restart and measure again. The
    ratio is the target.
  - webhook: creates at -webhook-rate (20/s) for -webhook-duration (30s),
    first with no webhook configured, then with the operator serving its
    webhooks with --webhook-cert-mode=local (it writes its own webhook
    configurations pointing at 127.0.0.1). kube-apiserver's
    apiserver_admission_webhook_admission_duration_seconds over the second
    phase gives p50 and p99 per webhook; the bench's own create latencies
    with and without webhooks are reported beside it. Each phase then
    creates -n objects one after another, each sent when the last was
    answered (a kubectl create loop); the ratio of the two times is a
    target. The objects are created in a namespace the operator does not
    watch, so they are admitted but not reconciled.

# Counting the operator's requests

kube-apiserver's apiserver_request_total carries no user or user agent, and
the operator's rest_client_requests_total no resource. So the operator gets a
user of its own (a client certificate signed by the cluster's CA, in
system:masters), and kube-apiserver writes an audit log for that user alone,
at Metadata level: verb, resource, subresource, response code and the time
each request arrived (a watch is counted when it starts, anything else when
it completes). Each window counts the requests that arrived in it; a marker
request tells the bench when the log has caught up. The idle window
also reports rest_client_requests_total by method as a cross-check.

The work directory (a temporary one unless -workdir) keeps the cluster's
logs, operator.log, audit.log and the profiles; it is removed after a successful run unless
-keep.
*/
package main
