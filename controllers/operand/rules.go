package operand

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
)

// Limits memcached 1.6 enforces when it starts (memcached.c, after option
// parsing, and thread.c); the spec's fields are refused where memcached would
// refuse them. Each was seen refused by the memcached of Debian's package
// (command_test.go).
const (
	// slabChunkMax is memcached's default slab_chunk_max, half its 1 MiB
	// slab page. The item size must be a multiple of it ("-I
	// (item_size_max: N) must be evenly divisible by slab_chunk_max") and
	// not smaller ("slab_chunk_max (bytes: 524288) cannot be larger than
	// -I"), which also covers "Item max size cannot be less than 1024
	// bytes".
	slabChunkMax = 512 * kib
	// maxItemSize: "Cannot set item size limit higher than a gigabyte."
	maxItemSize = 1 * gib
	// fdsPerThread: each worker thread holds five file descriptors (its
	// libevent base and notify pipe), counted against the connection limit;
	// memcached exits at start when they and its listening sockets reach it
	// ("Too many open files" in the release shipped, "Maxconns setting is
	// too low" in 1.6.18), and
	// refuses clients once they fill it.
	fdsPerThread = 5
	// minClientConnections is what a Memcached keeps for clients beyond
	// those descriptors and a few of memcached's own: admission asks for
	// that much more than memcached's own start-up check, so that a pod
	// that starts can also serve.
	minClientConnections = 16
	// threadWarning: above it memcached warns "Setting a high number of
	// worker threads is not recommended".
	threadWarning = 64
)

// Validate returns every way spec asks for what memcached refuses to start
// with, or for a container memory limit that memcached outgrows. path is the
// spec's path.
func Validate(spec *cachev1.MemcachedSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	memPath, itemPath := path.Child("memory"), path.Child("maxItemSize")
	if spec.Memory != nil {
		errs = append(errs, validateMemory(spec.Memory, memPath)...)
	}
	if spec.MaxItemSize != nil {
		errs = append(errs, validateItemSize(spec.MaxItemSize, itemPath)...)
	}
	s := FromSpec(spec)
	if len(errs) == 0 && s.MaxItemSize*2 > s.MemoryMiB*mib {
		// "Cannot set item size limit higher than 1/2 of memory max."
		errs = append(errs, field.Invalid(itemPath, quantityString(spec.MaxItemSize, s.MaxItemSize),
			fmt.Sprintf("must be at most half of spec.memory (%s): memcached refuses a larger item size", s.memory())))
	}
	threadsOK := true
	if spec.Threads != nil && *spec.Threads < 1 {
		// "Number of threads must be greater than 0"
		errs = append(errs, field.Invalid(path.Child("threads"), *spec.Threads, "must be at least 1"))
		threadsOK = false
	}
	if min := MinConnections(s.Threads); threadsOK && s.MaxConnections < min {
		errs = append(errs, field.Invalid(path.Child("maxConnections"), s.MaxConnections, fmt.Sprintf(
			"must be at least %d with %d threads: memcached counts %d file descriptors per thread against this limit, "+
				"exits at start when they fill it and refuses clients when they nearly do; %d are kept for clients",
			min, s.Threads, fdsPerThread, minClientConnections)))
	}
	if len(errs) == 0 && spec.Resources != nil {
		errs = append(errs, validateMemoryLimit(spec.Resources, s, path.Child("resources", "limits").Key(string(corev1.ResourceMemory)))...)
	}
	return errs
}

// MinConnections is the smallest maxConnections admitted with threads
// worker threads.
func MinConnections(threads int64) int64 {
	return fdsPerThread*threads + minClientConnections
}

// Warnings are memcached's own start-up warnings for spec, as admission
// warnings: what memcached accepts but advises against.
func Warnings(spec *cachev1.MemcachedSpec, path *field.Path) []string {
	if s := FromSpec(spec); s.Threads > threadWarning {
		return []string{fmt.Sprintf("%s: %d worker threads: memcached warns against more than %d, "+
			"and against more threads than the node has cores", path.Child("threads"), s.Threads, threadWarning)}
	}
	return nil
}

func validateMemory(q *resource.Quantity, path *field.Path) field.ErrorList {
	v, exact := q.AsInt64()
	switch {
	case !exact || v%mib != 0:
		return field.ErrorList{field.Invalid(path, q.String(),
			"must be a whole number of MiB, such as 64Mi or 2Gi: memcached takes its memory in MiB")}
	case v < 1*mib:
		// memcached refuses it through the item size: even the smallest,
		// 512Ki, is more than half of 0 MiB.
		return field.ErrorList{field.Invalid(path, q.String(), "must be at least 1Mi")}
	}
	return nil
}

func validateItemSize(q *resource.Quantity, path *field.Path) field.ErrorList {
	v, exact := q.AsInt64()
	switch {
	case !exact:
		return field.ErrorList{field.Invalid(path, q.String(),
			"must be a whole number of bytes, such as 1Mi (in a quantity, m means one thousandth)")}
	case v < slabChunkMax:
		return field.ErrorList{field.Invalid(path, q.String(),
			"must be at least 512Ki: memcached refuses an item size smaller than its 512Ki slab chunk")}
	case v > maxItemSize:
		return field.ErrorList{field.Invalid(path, q.String(), "must be at most 1Gi: memcached refuses a larger item size")}
	case v%slabChunkMax != 0:
		return field.ErrorList{field.Invalid(path, q.String(),
			"must be a multiple of 512Ki, such as 1Mi, 1536Ki or 4Mi: memcached stores large items in 512Ki chunks and refuses other sizes")}
	}
	return nil
}

func validateMemoryLimit(r *corev1.ResourceRequirements, s Settings, path *field.Path) field.ErrorList {
	limit, ok := r.Limits[corev1.ResourceMemory]
	if !ok {
		return nil
	}
	if min := MinMemoryLimit(s); limit.CmpInt64(min) < 0 {
		return field.ErrorList{field.Invalid(path, limit.String(), fmt.Sprintf(
			"must be at least %s: spec.memory (%s) plus %s that memcached uses beside its items "+
				"(%d connections, %d threads, the hash table); below that the kernel kills memcached once its cache fills",
			resource.NewQuantity(min, resource.BinarySI), s.memory(),
			resource.NewQuantity(Overhead(s), resource.BinarySI), s.MaxConnections, s.Threads))}
	}
	return nil
}

// quantityString is q as the user wrote it, or v when q is nil.
func quantityString(q *resource.Quantity, v int64) string {
	if q != nil {
		return q.String()
	}
	return resource.NewQuantity(v, resource.BinarySI).String()
}
