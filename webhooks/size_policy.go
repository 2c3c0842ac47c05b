package webhooks

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
)

// SizePolicy is the cluster administrator's rule for spec.size: the size a
// Memcached gets when it sets none, and the range a set size must fall in.
// The operator takes it from the --default-size, --min-size and --max-size
// flags.
type SizePolicy struct {
	// Default is the spec.size given to a Memcached that sets none.
	Default int32
	// Min is the smallest spec.size admitted.
	Min int32
	// Max is the largest spec.size admitted.
	Max int32
}

// DefaultSizePolicy is the policy when no flag changes it: three pods by
// default, between one and sixteen.
func DefaultSizePolicy() SizePolicy {
	return SizePolicy{Default: 3, Min: 1, Max: 16}
}

// Validate reports whether the policy itself makes sense:
// 1 <= Min <= Default <= Max. The error names the flags so that the
// operator can exit with it.
func (p SizePolicy) Validate() error {
	switch {
	case p.Min < 1:
		return fmt.Errorf("--min-size=%d: must be at least 1", p.Min)
	case p.Max < p.Min:
		return fmt.Errorf("--max-size=%d is less than --min-size=%d", p.Max, p.Min)
	case p.Default < p.Min || p.Default > p.Max:
		return fmt.Errorf("--default-size=%d is outside [--min-size=%d, --max-size=%d]", p.Default, p.Min, p.Max)
	}
	return nil
}

// DefaultMemcached sets spec.size to the policy's default when it is
// omitted. (The method cannot be called Default: that is the field.)
func (p SizePolicy) DefaultMemcached(mc *cachev1.Memcached) {
	if mc.Spec.Size == nil {
		size := p.Default
		mc.Spec.Size = &size
	}
}

// ValidateMemcached returns every way mc breaks the policy: its size and its
// name.
func (p SizePolicy) ValidateMemcached(mc *cachev1.Memcached) field.ErrorList {
	errs := ValidateName(mc.Name, field.NewPath("metadata", "name"))
	return append(errs, p.ValidateSize(p.effectiveSize(mc), field.NewPath("spec", "size"))...)
}

// ValidateSize checks that size is within [Min, Max]; path names the field
// that holds it (spec.size, or spec.replicas of a Scale).
func (p SizePolicy) ValidateSize(size int32, path *field.Path) field.ErrorList {
	switch {
	case size < p.Min:
		return field.ErrorList{field.Invalid(path, size, fmt.Sprintf("must be at least %d", p.Min))}
	case size > p.Max:
		return field.ErrorList{field.Invalid(path, size, fmt.Sprintf("must be no more than %d", p.Max))}
	}
	return nil
}

// Warnings are the admission warnings for mc: advice that does not block it.
func (p SizePolicy) Warnings(mc *cachev1.Memcached) admission.Warnings {
	return sizeWarnings(p.effectiveSize(mc), field.NewPath("spec", "size"))
}

// effectiveSize is the size the operator will run: spec.size, or the
// default when the defaulting webhook did not run.
func (p SizePolicy) effectiveSize(mc *cachev1.Memcached) int32 {
	if mc.Spec.Size == nil {
		return p.Default
	}
	return *mc.Spec.Size
}

func sizeWarnings(size int32, path *field.Path) admission.Warnings {
	if size == 1 {
		return admission.Warnings{path.String() + ": 1 pod gives no redundancy: " +
			"the cache is empty while that pod restarts or moves, and no PodDisruptionBudget protects it; " +
			"set 2 or more to keep it available"}
	}
	return nil
}

// ValidateName checks that a Memcached's name can name its children: the
// Service needs a DNS-1035 label (lower case, starts with a letter, no dots,
// at most 63 characters) and the pods carry the name as a label value. The
// API server itself only asks for a DNS-1123 subdomain, which allows dots,
// a leading digit and 253 characters.
func ValidateName(name string, path *field.Path) field.ErrorList {
	msgs := validation.IsDNS1035Label(name)
	if len(msgs) == 0 {
		// A DNS-1035 label is always a valid label value. The check stays so
		// that the label is still guarded should the Service rule be
		// relaxed; running it only here avoids repeating the length error.
		msgs = validation.IsValidLabelValue(name)
	}
	var errs field.ErrorList
	for _, msg := range msgs {
		errs = append(errs, field.Invalid(path, name, nameRulePrefix+msg))
	}
	return errs
}

// nameRulePrefix says why the name is held to a stricter rule than the API
// server's own.
const nameRulePrefix = "the name is also the Memcached's Service name, so: "
