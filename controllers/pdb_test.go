package controllers

import (
	"testing"

	"github.com/example-inc/memcached-operator/api/v1/gen"
)

func TestDesiredPDB(t *testing.T) {
	for size, want := range map[int32]bool{1: false, 2: true, 16: true} {
		if got := desiredPDB(gen.Memcached("ns", "a", gen.WithSize(size)), Options{}) != nil; got != want {
			t.Errorf("size %d: PDB present = %v, want %v", size, got, want)
		}
	}
}
