package operand

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
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

// Resources are the container resources of a Memcached that sets none. The
// memory request is what a full cache uses, the limit leaves as much again
// of headroom for bursts of connections; an eighth of a core per worker
// thread caps CPU. With the defaults: requests 50m and 96Mi, limits 500m and
// 128Mi, the values the operator used before the spec had these fields.
func Resources(s Settings) corev1.ResourceRequirements {
	request := MinMemoryLimit(s)
	limit := request + Overhead(s)
	return corev1.ResourceRequirements{
		Requests: corev1.ResourceList{
			corev1.ResourceCPU:    *resource.NewMilliQuantity(50, resource.DecimalSI),
			corev1.ResourceMemory: *resource.NewQuantity(request, resource.BinarySI),
		},
		Limits: corev1.ResourceList{
			corev1.ResourceCPU:    *resource.NewMilliQuantity(125*s.Threads, resource.DecimalSI),
			corev1.ResourceMemory: *resource.NewQuantity(limit, resource.BinarySI),
		},
	}
}

func roundUpMiB(n int64) int64 {
	return (n + mib - 1) / mib * mib
}
