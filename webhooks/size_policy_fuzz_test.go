package webhooks

import (
	"context"
	"errors"
	"regexp"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/example-inc/memcached-operator/api/v1/gen"
)

// serviceName is the rule a name must follow, written out independently of
// the validation package: a DNS-1035 label.
var serviceName = regexp.MustCompile(`^[a-z]([-a-z0-9]*[a-z0-9])?$`)

// FuzzValidate checks the validator against the policy's definition: a size
// in [Min, Max] with a valid name gives no errors; a size out of range always
// gives an error on spec.size; a bad name always gives an error on
// metadata.name; nothing panics. The policy is derived from the inputs so
// that every input exercises a valid one.
func FuzzValidate(f *testing.F) {
	f.Fuzz(func(t *testing.T, name string, size, lo, hi int32) {
		policy := SizePolicy{Min: 1 + int32(uint32(lo)%1000)}
		policy.Max = policy.Min + int32(uint32(hi)%1000)
		policy.Default = policy.Min + (policy.Max-policy.Min)/2
		if err := policy.Validate(); err != nil {
			t.Fatalf("derived policy %+v: %v", policy, err)
		}
		mc := gen.Memcached("default", name, gen.WithSize(size))
		nameOK := len(name) <= 63 && serviceName.MatchString(name)
		sizeOK := size >= policy.Min && size <= policy.Max

		errs := policy.ValidateMemcached(mc)
		var nameErr, sizeErr bool
		for _, e := range errs {
			if e.Type != field.ErrorTypeInvalid {
				t.Fatalf("error of type %s: %v", e.Type, e)
			}
			switch e.Field {
			case "metadata.name":
				nameErr = true
			case "spec.size":
				sizeErr = true
			default:
				t.Fatalf("error on an unexpected field: %v", e)
			}
		}
		if nameErr == nameOK {
			t.Fatalf("name %q: valid=%v but errors %v", name, nameOK, errs)
		}
		if sizeErr == sizeOK {
			t.Fatalf("size %d, policy %+v: in range=%v but errors %v", size, policy, sizeOK, errs)
		}

		// The admission validator, called outside an admission request.
		v := memcachedValidator{policy: policy}
		warnings, err := v.ValidateCreate(context.Background(), mc)
		checkAdmission(t, err, len(errs) > 0, sizeErr)
		if wantWarning := len(errs) == 0 && size == 1; (len(warnings) > 0) != wantWarning {
			t.Fatalf("size %d: warnings %q", size, warnings)
		}

		// An update checks the size when it changes, and never the name.
		oldMC := mc.DeepCopy()
		*oldMC.Spec.Size = size ^ 1
		_, err = v.ValidateUpdate(context.Background(), oldMC, mc)
		checkAdmission(t, err, !sizeOK, !sizeOK)

		// An update that keeps the size is always admitted.
		relabelled := mc.DeepCopy()
		relabelled.Labels = map[string]string{"fuzz": "yes"}
		if _, err := v.ValidateUpdate(context.Background(), mc, relabelled); err != nil {
			t.Fatalf("update keeping size %d refused: %v", size, err)
		}
	})
}

// checkAdmission asserts that err is nil when !wantErr, and otherwise an
// Invalid status whose causes name spec.size when wantSize.
func checkAdmission(t *testing.T, err error, wantErr, wantSize bool) {
	t.Helper()
	if !wantErr {
		if err != nil {
			t.Fatalf("refused: %v", err)
		}
		return
	}
	if !apierrors.IsInvalid(err) {
		t.Fatalf("got %v, want an Invalid status", err)
	}
	if !wantSize {
		return
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) || status.Status().Details == nil {
		t.Fatalf("no status details in %v", err)
	}
	for _, c := range status.Status().Details.Causes {
		if c.Field == "spec.size" {
			return
		}
	}
	t.Fatalf("no spec.size cause in %v", err)
}
