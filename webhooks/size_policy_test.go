package webhooks_test

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
	"github.com/example-inc/memcached-operator/api/v1/gen"
	"github.com/example-inc/memcached-operator/webhooks"
)

func TestSizePolicyValidate(t *testing.T) {
	tests := []struct {
		name    string
		policy  webhooks.SizePolicy
		wantErr string // "" for valid
	}{
		{"the default policy", webhooks.DefaultSizePolicy(), ""},
		{"a single size", webhooks.SizePolicy{Default: 1, Min: 1, Max: 1}, ""},
		{"default at the maximum", webhooks.SizePolicy{Default: 8, Min: 2, Max: 8}, ""},
		{"default at the minimum", webhooks.SizePolicy{Default: 2, Min: 2, Max: 8}, ""},
		{"zero minimum", webhooks.SizePolicy{Default: 3, Min: 0, Max: 16}, "--min-size=0: must be at least 1"},
		{"negative minimum", webhooks.SizePolicy{Default: 3, Min: -1, Max: 16}, "--min-size=-1: must be at least 1"},
		{"the zero value", webhooks.SizePolicy{}, "--min-size=0: must be at least 1"},
		{"maximum below minimum", webhooks.SizePolicy{Default: 3, Min: 4, Max: 2}, "--max-size=2 is less than --min-size=4"},
		{"default below minimum", webhooks.SizePolicy{Default: 1, Min: 2, Max: 16}, "--default-size=1 is outside [--min-size=2, --max-size=16]"},
		{"default above maximum", webhooks.SizePolicy{Default: 17, Min: 1, Max: 16}, "--default-size=17 is outside [--min-size=1, --max-size=16]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.policy.Validate()
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("Validate() = %v, want nil", err)
			case tt.wantErr != "" && (err == nil || err.Error() != tt.wantErr):
				t.Fatalf("Validate() = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

func TestDefaultSizePolicy(t *testing.T) {
	if got, want := webhooks.DefaultSizePolicy(), (webhooks.SizePolicy{Default: 3, Min: 1, Max: 16}); got != want {
		t.Fatalf("DefaultSizePolicy() = %+v, want %+v", got, want)
	}
}

// TestSizePolicyOnAMemcached holds each Memcached to a policy as the
// webhooks do: ValidateMemcached and Warnings see the object as sent (a size
// left out is the policy's default), then DefaultMemcached fills the size in.
func TestSizePolicyOnAMemcached(t *testing.T) {
	def := webhooks.DefaultSizePolicy()
	narrow := webhooks.SizePolicy{Default: 5, Min: 2, Max: 8}
	sized := func(name string, n int32) *cachev1.Memcached { return gen.Memcached("default", name, gen.WithSize(n)) }
	tests := []struct {
		name     string
		policy   webhooks.SizePolicy
		mc       *cachev1.Memcached
		want     []string // each error as field.Error.Error() prints it
		warn     bool     // the single-pod warning
		wantSize int32    // after DefaultMemcached
	}{
		{"default policy, size 3", def, sized("cache", 3), nil, false, 3},
		{"default policy, size 1", def, sized("cache", 1), nil, true, 1},
		{"size 2", def, sized("a", 2), nil, false, 2},
		{"default policy, size 16", def, sized("cache", 16), nil, false, 16},
		{"default policy, size omitted", def, gen.Memcached("default", "cache"), nil, false, 3},
		{"size omitted, default 1", webhooks.SizePolicy{Default: 1, Min: 1, Max: 4}, gen.Memcached("default", "a"), nil, true, 1},
		{"default policy, size 17", def, sized("cache", 17), []string{"spec.size: Invalid value: 17: must be no more than 16"}, false, 17},
		{"default policy, size 40", def, sized("cache", 40), []string{"spec.size: Invalid value: 40: must be no more than 16"}, false, 40},
		{"default policy, size 0", def, sized("cache", 0), []string{"spec.size: Invalid value: 0: must be at least 1"}, false, 0},
		{"default policy, size -5", def, sized("cache", -5), []string{"spec.size: Invalid value: -5: must be at least 1"}, false, -5},
		{"narrow policy, size 1", narrow, sized("cache", 1), []string{"spec.size: Invalid value: 1: must be at least 2"}, true, 1},
		{"narrow policy, size 2", narrow, sized("cache", 2), nil, false, 2},
		{"narrow policy, size 8", narrow, sized("cache", 8), nil, false, 8},
		{"an out-of-range size is kept for the validator to reject", narrow, sized("cache", 9),
			[]string{"spec.size: Invalid value: 9: must be no more than 8"}, false, 9},
		{"size omitted takes the default", narrow, gen.Memcached("default", "cache"), nil, false, 5},
		{"a name and a size, both wrong", def, sized("9lives", 20), []string{
			`metadata.name: Invalid value: "9lives": the name is also the Memcached's Service name, so: a DNS-1035 label must consist of`,
			"spec.size: Invalid value: 20: must be no more than 16",
		}, false, 20},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs := tt.policy.ValidateMemcached(tt.mc)
			if len(errs) != len(tt.want) {
				t.Fatalf("ValidateMemcached() = %v, want %d errors %q", errs, len(tt.want), tt.want)
			}
			for i, want := range tt.want {
				if got := errs[i].Error(); !strings.HasPrefix(got, want) {
					t.Errorf("error %d = %q, want prefix %q", i, got, want)
				}
			}
			if got := tt.policy.Warnings(tt.mc); tt.warn != (len(got) != 0) ||
				tt.warn && (len(got) != 1 || !strings.HasPrefix(got[0], "spec.size: 1 pod gives no redundancy: ")) {
				t.Errorf("Warnings() = %q, want the single-pod warning: %v", got, tt.warn)
			}
			tt.policy.DefaultMemcached(tt.mc)
			if tt.mc.Spec.Size == nil || *tt.mc.Spec.Size != tt.wantSize {
				t.Errorf("spec.size after DefaultMemcached = %v, want %d", tt.mc.Spec.Size, tt.wantSize)
			}
		})
	}

	// The default is a copy: changing one object's size leaves the next alone.
	a, b := gen.Memcached("default", "a"), gen.Memcached("default", "b")
	narrow.DefaultMemcached(a)
	*a.Spec.Size = 99
	narrow.DefaultMemcached(b)
	if *b.Spec.Size != 5 {
		t.Fatalf("second object got size %d, want 5", *b.Spec.Size)
	}
}

func TestValidateName(t *testing.T) {
	path := field.NewPath("metadata", "name")
	const why = "the name is also the Memcached's Service name, so: "
	dns1035 := why + "a DNS-1035 label must consist of"
	tests := []struct {
		name string
		want []string // error details; nil for valid
	}{
		{"cache", nil},
		{"x", nil},
		{"my-cache-1", nil},
		{strings.Repeat("a", 63), nil},
		{strings.Repeat("a", 64), []string{why + "must be no more than 63 characters"}},
		{"a" + strings.Repeat(".b", 40), []string{why + "must be no more than 63 characters", dns1035}},
		{"", []string{dns1035}},
		{"my.cache", []string{dns1035}},
		{"1cache", []string{dns1035}},
		{"-cache", []string{dns1035}},
		{"cache-", []string{dns1035}},
		{"Cache", []string{dns1035}},
		{"my_cache", []string{dns1035}},
		{"caché", []string{dns1035}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs := webhooks.ValidateName(tt.name, path)
			if len(errs) != len(tt.want) {
				t.Fatalf("ValidateName(%q) = %v, want %d errors", tt.name, errs, len(tt.want))
			}
			for i, want := range tt.want {
				if errs[i].Field != "metadata.name" || errs[i].Type != field.ErrorTypeInvalid ||
					!strings.HasPrefix(errs[i].Detail, want) {
					t.Errorf("error %d = %v, want Invalid metadata.name %q", i, errs[i], want)
				}
			}
		})
	}
}
