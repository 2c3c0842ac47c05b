/*
Package controllers holds the controllers suite: the Memcached reconciler
(package controllers), run in the test process as cmd/manager/app wires
it, against a local control plane (etcd, kube-apiserver,
kube-controller-manager and kube-scheduler, with kwok's fake node marking
pods Ready; hack/local-cluster/localcluster) into which the suite installs
the CRD. It proves what the reconciler writes and reports (the owned
objects, status and its conditions, events, the blocked gauge), what it
repairs, the API requests it makes and the kinds it watches, and how it
follows what the cluster serves: cert-manager's API, OpenShift's APIServer
TLS profile and Proxy, the Prometheus Operator's API. A rollout paced by
warmth reads the counters of real memcached processes on this host.

It lives under test/ because it starts a cluster; make test runs it.
*/
package controllers
