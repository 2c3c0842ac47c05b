package operand

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
)

// What memcached uses beside its items, estimated from its structures and
// checked against a filled memcached's resident memory (see
// resources_test.go): the process itself with its slab and LRU bookkeeping,
// a read buffer and connection state for each open connection, per-thread
// caches, and the hash table, which holds a pointer per item and grows in
// powers of two (about 1/16 of the item memory when items are small).
const (
	baseOverhead          = 16 * mib
	overheadPerConnection = 8 * kib
	overheadPerThread     = 1 * mib
	hashTableShare        = 16
)

// tlsHeadroomPerConnection is what the limit of a memcached serving TLS
// keeps beside Resources' own headroom for each connection: memcached keeps
// an OpenSSL session with its buffers for each open connection, on top of
// what a plain one costs. make bench-memory fills pods on a real node with
// every connection open and busy at once (docs/benchmarks.md, "memcached
// filled to its memory"): a 64Mi Memcached over TLS with maxConnections
// 4096 was OOM-killed at the plain limit, 176Mi; with 24 KiB more per
// connection it peaked 2 MiB under its limit, a busy TLS connection costing
// about 50 KiB where a plain one costs about 20. With this, the limit keeps
// 64 KiB per TLS connection.
const tlsHeadroomPerConnection = 48 * kib

// Overhead is the memory memcached needs beside its items when its cache is
// full: 32Mi with the defaults.
func Overhead(s Settings) int64 {
	o := baseOverhead + s.MaxConnections*overheadPerConnection + s.Threads*overheadPerThread +
		s.MemoryMiB*mib/hashTableShare
	return roundUpMiB(o)
}

// MinMemoryLimit is the smallest container memory limit memcached runs in
// once its cache is full: its items plus Overhead. Below it the kernel kills
// memcached as the cache fills, which memcached cannot know at start-up.
func MinMemoryLimit(s Settings) int64 {
	return s.MemoryMiB*mib + Overhead(s)
}

// Resources are the container resources the defaulting webhook stores in a
// Memcached that sets none. The memory request is what a full cache uses,
// the limit leaves as much again of headroom for bursts of connections.
// CPU is requested (50m: an idle cache uses next to none) but not limited:
// memcached is latency-bound, and a CFS quota throttles it within each
// 100 ms period that a burst of requests uses it up, for the rest of the
// period: at the earlier limit of 125m per thread a pod fell well short of
// the throughput and p99 latency of the same memcached on the host, and
// with none it does not (make bench-memcached; the figures and the
// reasoning are in docs/benchmarks.md, "memcached in a pod against
// memcached on the host"). Serving TLS, the limit keeps more room for each
// connection (tlsHeadroomPerConnection). With the defaults: requests 50m
// and 96Mi, limit 128Mi; serving TLS, limit 176Mi.
func Resources(s Settings) corev1.ResourceRequirements {
	request := MinMemoryLimit(s)
	limit := request + Overhead(s) + tlsHeadroom(s)
	return corev1.ResourceRequirements{
		Requests: corev1.ResourceList{
			corev1.ResourceCPU:    *resource.NewMilliQuantity(50, resource.DecimalSI),
			corev1.ResourceMemory: *resource.NewQuantity(request, resource.BinarySI),
		},
		Limits: corev1.ResourceList{
			corev1.ResourceMemory: *resource.NewQuantity(limit, resource.BinarySI),
		},
	}
}

// ResourcesWithCPULimit are Resources with a CPU limit of 125m per thread:
// the defaults of the operator before Resources dropped the limit, and
// before the spec had resources. Memcached stored with them keep them (see
// ContainerResources and the defaulting webhook): an operator upgrade
// restarts no pod. With the defaults: limits 500m and 128Mi.
func ResourcesWithCPULimit(s Settings) corev1.ResourceRequirements {
	r := ResourcesWithoutTLSHeadroom(s)
	r.Limits[corev1.ResourceCPU] = *resource.NewMilliQuantity(125*s.Threads, resource.DecimalSI)
	return r
}

// ResourcesWithoutTLSHeadroom are Resources as the operator derived them
// before the limit kept tlsHeadroomPerConnection for TLS: what Memcached
// serving TLS that were admitted then have stored. They keep them, and their
// pods with them (the Deployment follows the stored resources), until their
// settings change; the defaulting webhook counts them as derived, as it
// does ResourcesWithCPULimit, so that they follow a change of memory.
func ResourcesWithoutTLSHeadroom(s Settings) corev1.ResourceRequirements {
	s.TLS = nil
	return Resources(s)
}

// tlsHeadroom is the limit's room for the TLS sessions of s's connections,
// none when s serves no TLS.
func tlsHeadroom(s Settings) int64 {
	if s.TLS == nil {
		return 0
	}
	return roundUpMiB(s.MaxConnections * tlsHeadroomPerConnection)
}

// ContainerResources are the resources of spec's memcached container: the
// spec's own, which the defaulting webhook fills in. A spec without them was
// stored before the spec had resources, or while the webhook was not
// running; its pods have always run with ResourcesWithCPULimit, and keep
// them, so that an operator upgrade restarts none of them.
func ContainerResources(spec *cachev1.MemcachedSpec) corev1.ResourceRequirements {
	if spec.Resources != nil {
		return *spec.Resources
	}
	return ResourcesWithCPULimit(FromSpec(spec))
}

func roundUpMiB(n int64) int64 {
	return (n + mib - 1) / mib * mib
}
