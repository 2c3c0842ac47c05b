package operand

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestResources(t *testing.T) {
	tests := []struct {
		name                       string
		s                          Settings
		cpuLimit, memReq, memLimit string
	}{
		// The values of the operator before the spec had these fields.
		{"the defaults", DefaultSettings(), "500m", "96Mi", "128Mi"},
		// A filled memcached -m 512 peaked at 541Mi resident (hash table
		// grown, 2.8M items of 100 bytes): the request holds it.
		{"512Mi", Settings{MemoryMiB: 512, MaxItemSize: mib, MaxConnections: 1024, Threads: 4}, "500m", "572Mi", "632Mi"},
		{"many connections and threads", Settings{MemoryMiB: 64, MaxItemSize: mib, MaxConnections: 8192, Threads: 16}, "2", "164Mi", "264Mi"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Resources(tt.s)
			want := corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m"), corev1.ResourceMemory: resource.MustParse(tt.memReq)},
				Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(tt.cpuLimit), corev1.ResourceMemory: resource.MustParse(tt.memLimit)},
			}
			if diff := cmp.Diff(want.Requests.Memory().String(), r.Requests.Memory().String()); diff != "" {
				t.Errorf("memory request (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(want.Limits.Memory().String(), r.Limits.Memory().String()); diff != "" {
				t.Errorf("memory limit (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(want.Limits.Cpu().String(), r.Limits.Cpu().String()); diff != "" {
				t.Errorf("cpu limit (-want +got):\n%s", diff)
			}
			if r.Requests.Cpu().String() != "50m" {
				t.Errorf("cpu request = %s", r.Requests.Cpu())
			}
			if got := MinMemoryLimit(tt.s); r.Requests.Memory().CmpInt64(got) != 0 {
				t.Errorf("request %s is not the least limit admitted, %d", r.Requests.Memory(), got)
			}
		})
	}
}

func TestFromSpecRoundsLikeMemcached(t *testing.T) {
	for q, want := range map[string]int64{"64Mi": 64 * mib, "0.5": 0, "1m": 0, "1.5": 1, "1536Ki": 1536 * kib, "-1": -1, "10E": 1 << 62} {
		if got := quantityValue(ptrTo(resource.MustParse(q))); got != want {
			t.Errorf("quantityValue(%s) = %d, want %d", q, got, want)
		}
	}
}

func TestParseCommandRefuses(t *testing.T) {
	for _, args := range [][]string{nil, {"redis-server"}, {"memcached", "-m", "64"}, {"memcached", "--threads=four"}, {"memcached", "--max-item-size=1g"}} {
		if s, err := ParseCommand(args); err == nil {
			t.Errorf("ParseCommand(%q) = %+v, want an error", args, s)
		}
	}
}

func ptrTo[T any](v T) *T { return &v }
