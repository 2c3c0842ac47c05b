package webhooks

import (
	"k8s.io/apimachinery/pkg/api/equality"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
	"github.com/example-inc/memcached-operator/controllers/operand"
)

// The CRD schema defaults memory, maxItemSize, maxConnections and threads,
// which hold without the webhook too; the webhook adds what depends on other
// fields, so that the stored object shows what runs.

// DefaultSpec fills in spec's resources and placement: what the defaulting
// webhook adds, exported so that tools without a webhook (the benchmark's
// floor) build the objects of the spec the API server would store. old is
// the stored spec on update, nil on create.
//
// Resources derived from the settings follow them: when the stored
// resources are derived ones and the update leaves them as they were (or
// leaves them out, as a server-side apply of a manifest that never set
// them does), they are derived again from the new settings. Otherwise
// raising spec.memory in a manifest that never mentioned resources would be
// refused for a memory limit the user never set. Resources derived by an
// earlier operator (a CPU limit per thread, or none stored) count as
// derived, but are kept while the settings they derive from do not change:
// rewriting them on a change of the size alone would restart every pod.
func DefaultSpec(spec, old *cachev1.MemcachedSpec) {
	switch {
	case old != nil && hasDerivedResources(old) && (spec.Resources == nil || equality.Semantic.DeepEqual(spec.Resources, old.Resources)):
		r := operand.ContainerResources(old)
		if !equality.Semantic.DeepEqual(operand.Resources(operand.FromSpec(old)), operand.Resources(operand.FromSpec(spec))) {
			r = operand.Resources(operand.FromSpec(spec))
		}
		spec.Resources = &r
	case spec.Resources == nil:
		r := operand.Resources(operand.FromSpec(spec))
		spec.Resources = &r
	}
	if !operand.HasPlacement(spec) {
		spec.TopologySpreadConstraints = operand.DefaultTopologySpread()
	}
	defaultMonitoring(spec, old)
}

// defaultMonitoring turns monitoring on for a new Memcached only: one
// stored without the field was created before the operator offered it, and
// turning it on there would replace every pod of an upgraded operator's
// caches. An update that leaves the field out (a server-side apply of a
// manifest that never set it) keeps the stored value; turning it off takes
// enabled: false.
func defaultMonitoring(spec, old *cachev1.MemcachedSpec) {
	switch {
	case spec.Monitoring != nil:
	case old == nil:
		spec.Monitoring = &cachev1.MemcachedMonitoring{Enabled: true}
	default:
		spec.Monitoring = old.Monitoring.DeepCopy()
	}
}

// hasDerivedResources reports whether spec's resources are derived from its
// settings, by this operator or an earlier one, or left to be (none stored).
func hasDerivedResources(spec *cachev1.MemcachedSpec) bool {
	s := operand.FromSpec(spec)
	return spec.Resources == nil ||
		equality.Semantic.DeepEqual(*spec.Resources, operand.Resources(s)) ||
		equality.Semantic.DeepEqual(*spec.Resources, operand.ResourcesWithCPULimit(s)) ||
		equality.Semantic.DeepEqual(*spec.Resources, operand.ResourcesWithoutTLSHeadroom(s))
}

// equalBesideSize reports whether a and b differ in nothing but spec.size.
func equalBesideSize(a, b *cachev1.MemcachedSpec) bool {
	ac, bc := *a, *b
	ac.Size, bc.Size = nil, nil
	return equality.Semantic.DeepEqual(ac, bc)
}
