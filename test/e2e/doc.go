/*
Package e2e is the end-to-end suite: one local cluster, started once per
run, whose pods run on the real node (kubelet, containerd, runc, the CNI
bridge, kube-proxy and CoreDNS; see localcluster.Options.RealNode) unless
they tolerate the taint of its one kwok node, with the suite's images
imported (nothing is pulled) and cert-manager's controllers and CA
injector running in the test process (test/framework/certmanager).

Every top-level container works in namespaces of its own (the DNS specs in
default, as the README does, removing what they put there), removes what
it installed cluster-wide when it ends, and carries labels
(labels_test.go) that select a part: make test-e2e LABELS=tls. With
E2E_CLUSTER=existing the suite runs on the cluster of KUBECONFIG instead,
started by anyone (providerFromEnv): it imports nothing, leaves out the
specs labelled host, and names them when it ends.

What each container proves is said in its specs and, for users, in
docs/reliability.md (faults, security, node restarts, metrics, TLS, the
CSV's claims), docs/olm.md and docs/disconnected.md. Where a spec stands in
for a part of a real cluster, the spec says so; the ones that do:

  - "kubectl apply with cert-manager" runs the operator on this host: it
    copies the certificate Secret to the files the operator reads, as
    kubelet does for a mounted Secret (certs/certstest), and routes the API
    server's webhook calls to the host. "operator as a pod" runs the same
    install with the operator image and no stand-in.
  - The operator's faults (faults_*_test.go) run the operator binary as a
    process of its own per spec, WATCH_NAMESPACE set to the spec's
    namespace, and put its Memcached's pods on the kwok node
    (fakeMemcached), where they are Ready at once: hundreds would not fit
    the real node. What memcached itself does is proven on the real node.
  - OLM's olm and catalog operators run as host processes; the catalog is
    bundle/ rendered by make catalog and served by opm serve on loopback.
    What OLM deploys runs on the real node.

It needs root. make test-e2e builds what it runs and installs the rest from
Debian; images are built without Docker by package images.
*/
package e2e
