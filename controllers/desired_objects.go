package controllers

import (
	"k8s.io/apimachinery/pkg/runtime"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
)

// DesiredObjects are the objects the reconciler keeps for mc, built by the
// same functions: the Deployment, the headless Service and, from pdbMinSize
// pods, the PodDisruptionBudget. It is exported so that a benchmark can create
// exactly these with no operator running and measure what the cluster itself
// spends on a Memcached. Its pods have no readiness gate, which only a
// running operator opens.
func DesiredObjects(mc *cachev1.Memcached, o Options) []runtime.ApplyConfiguration {
	o = o.withDefaults()
	out := []runtime.ApplyConfiguration{desiredDeployment(mc, o, false), desiredService(mc)}
	if pdb := desiredPDB(mc, o); pdb != nil {
		out = append(out, pdb)
	}
	return out
}
