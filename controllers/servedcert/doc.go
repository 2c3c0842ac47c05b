// Package servedcert finds, while memcached pods run, the TLS certificates
// they serve that are near or past their end.
//
// A certificate is checked when a pod starts (its TLS check) and when its
// Secret changes (the sidecar checks the new files before memcached loads
// them). A certificate that simply runs out while the pod runs, because its
// renewal failed or nothing renews it, passes neither: memcached serves it
// until clients refuse it. So a [Watcher] asks each pod's sidecar, every
// interval, which certificate memcached serves
// (certs/memcachedtls.ServedPath), and keeps a [Report] per Memcached,
// which the reconciler turns into the CertificateExpiring condition and the
// Watcher into a metric that an alert reads.
//
// Near its end means less than a quarter of its lifetime left ([Near]).
// cert-manager renews a certificate, by default, with a third left, and the
// sidecar hands a renewed one to memcached within seconds of kubelet
// updating the volume; a served certificate past the quarter mark has not
// been replaced in time, whoever issues it.
//
// The sidecar is asked at the pod's IP, never through a proxy: the cluster
// proxy OLM gives the operator is for leaving the cluster.
package servedcert
