package controllers

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/example-inc/memcached-operator/api/v1/gen"
)

func TestDesiredObjects(t *testing.T) {
	tests := []struct {
		size int32
		want []string
	}{
		{size: 1, want: []string{"Deployment", "Service"}},
		{size: pdbMinSize, want: []string{"Deployment", "Service", "PodDisruptionBudget"}},
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
