/*
Package faults proves that the operator loses, duplicates and lets in
nothing when things break: it runs the operator binary as a real process
(test/framework/operatorproc) against a local cluster
(test/framework/localcluster: etcd, kube-apiserver, the controller manager,
the scheduler and kwok, so pods become Ready), kills it, restarts the API
server and etcd, fails its leader over, edits what it owns and sends its
webhooks garbage.

	make test-faults                           # 200 Memcached in the crash rollout, as CI runs it
	make test-faults TEST_VERBOSE=1            # figures printed
	make test-faults FAULT_CRS=40 FAULT_KILLS=3

What each spec does:

  - kill -9 of the operator at FAULT_KILLS random moments of
    a FAULT_CRS-Memcached rollout, each followed by a restart; every
    Memcached converges with exactly its own Deployment, Service and PDB.
  - kube-apiserver, and separately etcd, stopped and
    started again mid-rollout; the same operator process converges.
  - two replicas with leader election; the leader
    is killed and the standby takes over, and the standby never reconciles
    while the leader lives.
  - hand edits and deletions of the owned objects are undone;
    a hand-added annotation stays.
  - with the operator gone and the fail-closed webhook
    configurations left, every Memcached write is refused.
  - the operator started as OLM's first rollout
    of an install or upgrade starts it, without its Subscription's
    config.env (operator-lifecycle-manager #2100), still validates with the
    Subscription's size policy and deploys its memcached image.
  - malformed AdmissionReview bodies posted straight to
    the webhook server are refused without a crash or unbounded memory.
  - a flood of large reviews posted straight to the webhook server
    leaves the operator alive, under half its memory limit, and admitting
    Memcached writes.

Each spec runs its own operator(s) with WATCH_NAMESPACE set to a namespace of
its own, so the specs do not see each other's objects. Figures (times,
counts, RSS) are report entries: `FAULT_ARGS=-v` prints them. The work
directory (cluster state and logs, one log per operator) is removed after a
green run and kept, with its path printed, after a failure.
*/
package faults
