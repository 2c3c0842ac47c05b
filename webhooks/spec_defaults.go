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
// Resources derived from the memory follow it: when the stored resources
// are the ones derived from the stored spec and the update leaves them as
// they were, they are derived again from the new spec. Otherwise raising
// spec.memory in a manifest that never mentioned resources would be refused
// for a memory limit the user never set.
func DefaultSpec(spec, old *cachev1.MemcachedSpec) {
	if spec.Resources == nil || (old != nil && hasDerivedResources(old) &&
		equality.Semantic.DeepEqual(spec.Resources, old.Resources)) {
		r := operand.Resources(operand.FromSpec(spec))
		spec.Resources = &r
	}
	if !operand.HasPlacement(spec) {
		spec.TopologySpreadConstraints = operand.DefaultTopologySpread()
	}
}

func hasDerivedResources(spec *cachev1.MemcachedSpec) bool {
	return spec.Resources != nil &&
		equality.Semantic.DeepEqual(*spec.Resources, operand.Resources(operand.FromSpec(spec)))
}

// equalBesideSize reports whether a and b differ in nothing but spec.size.
func equalBesideSize(a, b *cachev1.MemcachedSpec) bool {
	ac, bc := *a, *b
	ac.Size, bc.Size = nil, nil
	return equality.Semantic.DeepEqual(ac, bc)
}
