package controllers

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/example-inc/memcached-operator/api/v1/gen"
)

// TestDesiredObjects: a PodDisruptionBudget from two pods, when one may stop.
func TestDesiredObjects(t *testing.T) {
	withPDB := []string{"Deployment", "Service", "PodDisruptionBudget"}
	tests := []struct {
		size int32
		want []string
	}{
		{1, []string{"Deployment", "Service"}},
		{2, withPDB},
		{16, withPDB},
	}
	for _, tt := range tests {
		mc := gen.Memcached("ns", "a", gen.WithSize(tt.size), gen.WithUID("uid-1"))
		var kinds []string
		for _, o := range DesiredObjects(mc, Options{}) {
			kinds = append(kinds, *o.(interface{ GetKind() *string }).GetKind())
		}
		if diff := cmp.Diff(tt.want, kinds); diff != "" {
			t.Errorf("size %d: kinds (-want +got):\n%s", tt.size, diff)
		}
	}
}
