package webhooks

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
	"github.com/example-inc/memcached-operator/controllers/operand"
)

// FuzzSpec builds specs from arbitrary quantities and numbers. Validation
// and the command builder never panic, and every spec the webhook admits
// gives a command line that, read back as memcached reads it, has the very
// settings of the spec.
func FuzzSpec(f *testing.F) {
	f.Add("64Mi", "1Mi", int32(1024), int32(4), "")
	f.Add("1Mi", "512Ki", int32(21), int32(1), "128Mi")
	f.Add("2Gi", "1Gi", int32(1296), int32(256), "3Gi")
	f.Add("1536Ki", "1m", int32(0), int32(0), "1")
	f.Add("10E", "-1", int32(-1), int32(-2147483648), "-1Mi")
	f.Fuzz(func(t *testing.T, memory, item string, conns, threads int32, limit string) {
		spec := &cachev1.MemcachedSpec{MaxConnections: &conns, Threads: &threads}
		if q, err := resource.ParseQuantity(memory); err == nil {
			spec.Memory = &q
		}
		if q, err := resource.ParseQuantity(item); err == nil {
			spec.MaxItemSize = &q
		}
		if q, err := resource.ParseQuantity(limit); err == nil {
			r := operand.Resources(operand.FromSpec(spec))
			r.Limits["memory"] = q
			spec.Resources = &r
		}
		errs := validateSpec(spec, field.NewPath("spec"))
		s := operand.FromSpec(spec)
		cmd := operand.Command(s)
		_ = operand.ResourcesWithCPULimit(s) // Resources and the earlier defaults
		if len(errs) > 0 {
			return
		}
		got, err := operand.ParseCommand(cmd)
		if err != nil {
			t.Fatalf("admitted %+v, but its command %q does not parse: %v", s, cmd, err)
		}
		if got != s {
			t.Fatalf("admitted %+v, but its command %q reads back as %+v", s, cmd, got)
		}
		if s.MemoryMiB < 1 || s.MaxItemSize < 512<<10 || s.MaxItemSize*2 > s.MemoryMiB<<20 || s.Threads < 1 ||
			s.MaxConnections < operand.MinConnections(s.Threads) {
			t.Fatalf("admitted settings memcached refuses: %+v", s)
		}
	})
}
