package certstest

import (
	"slices"
	"testing"
)

func TestFreePortsDistinct(t *testing.T) {
	ports, err := FreePorts(5)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(ports)
	if len(slices.Compact(ports)) != 5 {
		t.Errorf("FreePorts(5) = %v, want 5 distinct ports", ports)
	}
}
