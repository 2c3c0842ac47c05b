/*
Package security proves the operator's security claims: least-privilege
RBAC, Pod Security, authenticated metrics, TLS versions and proxy
credentials kept out of everything but the Deployments. It runs under
`make test-security`: its ginkgo suite starts a local cluster
(test/framework/localcluster) and the operator binary
(test/framework/operatorproc).

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

On the local cluster the operator runs as the ServiceAccount config/default
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

The work directory (cluster state and logs, operator logs) is kept when
anything fails; the suite prints where.
*/
package security
