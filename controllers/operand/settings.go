package operand

import (
	"gopkg.in/inf.v0"
	"k8s.io/apimachinery/pkg/api/resource"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
	"github.com/example-inc/memcached-operator/certs/tlsprofile"
)

const (
	kib = 1024
	mib = 1024 * kib
	gib = 1024 * mib
)

// The defaults are memcached's own, and the CRD's (the +kubebuilder:default
// markers in api/v1): a Memcached that sets none runs memcached as it comes.
const (
	DefaultMemoryMiB      = 64
	DefaultMaxItemSize    = 1 * mib
	DefaultMaxConnections = 1024
	DefaultThreads        = 4
)

// Settings are what memcached is started with.
type Settings struct {
	// MemoryMiB is the memory for items (--memory-limit), in MiB.
	MemoryMiB int64
	// MaxItemSize is the largest item (--max-item-size), in bytes.
	MaxItemSize int64
	// MaxConnections is --conn-limit.
	MaxConnections int64
	// Threads is --threads.
	Threads int64
	// TLS, when set, serves clients over TLS only.
	TLS *TLS
}

// DefaultSettings are the settings of a Memcached that sets none.
func DefaultSettings() Settings {
	return Settings{
		MemoryMiB:      DefaultMemoryMiB,
		MaxItemSize:    DefaultMaxItemSize,
		MaxConnections: DefaultMaxConnections,
		Threads:        DefaultThreads,
	}
}

// memory is the item memory as a quantity, as a spec would give it.
func (s Settings) memory() *resource.Quantity {
	return resource.NewQuantity(s.MemoryMiB*mib, resource.BinarySI)
}

// FromSpec reads the settings of spec, taking the default for each field it
// omits. A memory that is not a whole number of MiB is rounded down, as
// memcached would; Validate refuses it first. TLS is the spec's under the
// default profile: the derived resources need only know that memcached
// serves TLS, and the reconciler sets the cluster's profile
// (TLSFromSpec).
func FromSpec(spec *cachev1.MemcachedSpec) Settings {
	s := DefaultSettings()
	s.TLS = TLSFromSpec(spec, tlsprofile.Profile{})
	if spec.Memory != nil {
		s.MemoryMiB = quantityValue(spec.Memory) / mib
	}
	if spec.MaxItemSize != nil {
		s.MaxItemSize = quantityValue(spec.MaxItemSize)
	}
	if spec.MaxConnections != nil {
		s.MaxConnections = int64(*spec.MaxConnections)
	}
	if spec.Threads != nil {
		s.Threads = int64(*spec.Threads)
	}
	return s
}

// quantityValue is q in whole units, rounded toward zero, and held within
// ±2^62 so that the rules' doubling of an item size cannot overflow.
func quantityValue(q *resource.Quantity) int64 {
	const limit = 1 << 62
	whole := new(inf.Dec).Round(q.AsDec(), 0, inf.RoundDown)
	switch v, ok := whole.Unscaled(); {
	case ok && v > -limit && v < limit:
		return v
	case whole.Sign() < 0:
		return -limit
	default:
		return limit
	}
}
