/*
Package devcluster proves the developer's local cluster as a user meets it:
the commands that start one (make run, make local-cluster) own the
machine's real node while they run, so these specs start their own clusters
and cannot share the end-to-end suite's (test/e2e).

  - The README's first command as a new user runs it, with no cluster
    configured (a fresh HOME, no KUBECONFIG) and the usual proxy variables
    naming a proxy that cannot be reached: make run starts the local
    cluster and the operator, says in one line which node runs the pods and
    why (the real node as root, where the sample's pods serve; kwok
    otherwise), and prints the commands for a second terminal, which work;
    the operator hands the proxy variables to every memcached container; a
    bad Memcached is refused by the webhooks; Ctrl-C stops the operator
    (its webhooks go) but not the cluster, which keeps the user's objects
    until make local-cluster-down, which leaves no process behind.
  - On the same directory, `make local-cluster` starts the cluster again
    with the user's objects, or empty (LOCAL_CLUSTER_FRESH=true) with the
    real node asked for by name; after its launcher is killed with SIGKILL,
    `make local-cluster-down` still leaves no process, mount, network
    interface or iptables rule behind.
  - A kept kwok cluster restarted with the real node: the kwok node is gone,
    its pods run for real, and kwok's addresses route to the bridge, not off
    the machine.
  - The end-to-end suite through its existing-cluster provider
    (E2E_CLUSTER=existing) on a cluster started apart with make
    local-cluster, the operator's image imported with LOCAL_CLUSTER_IMAGES,
    from a shell behind an unreachable proxy: every spec it runs there
    passes, and it names the specs it left out for needing its own cluster
    on this host.

It needs root. `make test-local-cluster` builds what it runs.
*/
package devcluster
