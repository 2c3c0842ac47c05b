/*
Package e2e proves the operator's `kubectl apply` install path end to end on
the local cluster of test/framework/localcluster, with cert-manager's real code issuing
and renewing the webhook certificate:

  - With no cluster: `kustomize build config/default` decoded into
    cert-manager's API types; each Certificate names its Service and lands
    in the manager's volume.
  - On the local cluster: cert-manager's controllers and CA injector run in the test process
    (test/framework/certmanager), config/default is applied with
    bin/kubectl (its NetworkPolicies land beside the manager, selecting its
    pods as config/default says; nothing here enforces them), the operator
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
  - A Memcached serving TLS from the Certificate of docs/tls/certificate.yaml,
    applied as docs/tls.md says: its Secret verifies for the Service and
    every pod's record, and a cert-manager renewal leaves the Deployment and
    its pods as they were (no rollout, no restart) and the Memcached
    Available.
  - The README's first command as a new user runs it, with no cluster
    configured (a fresh HOME, no KUBECONFIG): make run starts
    the local cluster and the operator, says in one line which node runs the
    pods and why (the real node as root, where the sample's pods serve; kwok
    otherwise), and prints the commands for a second
    terminal, which work; a bad Memcached is refused by the webhooks; Ctrl-C
    stops the operator (its webhooks go) but not the cluster, which keeps
    the user's objects until make local-cluster-down, which leaves no
    process behind.

The cert-manager and webhook specs' cluster has kwok's pods, so the operator runs on the host and the test
stands in for kubelet in two ways (test/node runs the same install with the
operator as a real pod and no stand-in),
each said where it happens: it copies the certificate Secret to the files the
operator reads, as kubelet does for a mounted Secret (test/framework/secretvolume), and
it routes the API server's webhook calls to the host.

`make test-e2e` runs it; KUBEBUILDER_ASSETS names the control plane binaries
(default bin/k8s/<version>), and bin/kubectl and bin/kustomize must exist
(`make kubectl kustomize`).
*/
package e2e
