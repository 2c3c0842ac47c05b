package operand

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
)

func TestResources(t *testing.T) {
	withTLS := func(s Settings) Settings {
		s.TLS = &TLS{}
		return s
	}
	tests := []struct {
		name             string
		s                Settings
		memReq, memLimit string
		// earlierCPULimit is ResourcesWithCPULimit's, earlierLimit its
		// memory limit and ResourcesWithoutTLSHeadroom's: memLimit when
		// empty.
		earlierCPULimit, earlierLimit string
	}{
		// The values of the operator before the spec had these fields.
		{"the defaults", DefaultSettings(), "96Mi", "128Mi", "500m", ""},
		// A filled memcached -m 512 peaked at 541Mi resident (hash table
		// grown, 2.8M items of 100 bytes): the request holds it.
		{"512Mi", Settings{MemoryMiB: 512, MaxItemSize: mib, MaxConnections: 1024, Threads: 4}, "572Mi", "632Mi", "500m", ""},
		{"many connections and threads", Settings{MemoryMiB: 64, MaxItemSize: mib, MaxConnections: 8192, Threads: 16}, "164Mi", "264Mi", "2", ""},
		// make bench-memory: a busy TLS connection costs about 50 KiB,
		// and 64Mi over TLS with maxConnections 4096 was OOM-killed at
		// 176Mi, the limit without the TLS headroom. The request and the
		// earlier resources stay as they were.
		{"the defaults over TLS", withTLS(DefaultSettings()), "96Mi", "176Mi", "500m", "128Mi"},
		{"4096 connections over TLS", withTLS(Settings{MemoryMiB: 64, MaxItemSize: mib, MaxConnections: 4096, Threads: 4}),
			"120Mi", "368Mi", "500m", "176Mi"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Resources(tt.s)
			if diff := cmp.Diff(tt.memReq, r.Requests.Memory().String()); diff != "" {
				t.Errorf("memory request (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.memLimit, r.Limits.Memory().String()); diff != "" {
				t.Errorf("memory limit (-want +got):\n%s", diff)
			}
			// A CPU quota throttles memcached to a fraction of what it
			// serves unthrottled (docs/benchmarks.md).
			if q, ok := r.Limits[corev1.ResourceCPU]; ok {
				t.Errorf("cpu limit = %s, want none", q.String())
			}
			if r.Requests.Cpu().String() != "50m" {
				t.Errorf("cpu request = %s", r.Requests.Cpu())
			}
			if got := MinMemoryLimit(tt.s); r.Requests.Memory().CmpInt64(got) != 0 {
				t.Errorf("request %s is not the least limit admitted, %d", r.Requests.Memory(), got)
			}
			// The earlier defaults, which Memcached stored with them keep:
			// they may never change, or an upgrade would restart the pods.
			earlierLimit := tt.earlierLimit
			if earlierLimit == "" {
				earlierLimit = tt.memLimit
			}
			earlier := ResourcesWithCPULimit(tt.s)
			want := corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m"), corev1.ResourceMemory: resource.MustParse(tt.memReq)},
				Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(tt.earlierCPULimit), corev1.ResourceMemory: resource.MustParse(earlierLimit)},
			}
			if !equality.Semantic.DeepEqual(want, earlier) {
				t.Errorf("ResourcesWithCPULimit = %v, want %v", earlier, want)
			}
			delete(want.Limits, corev1.ResourceCPU)
			if got := ResourcesWithoutTLSHeadroom(tt.s); !equality.Semantic.DeepEqual(want, got) {
				t.Errorf("ResourcesWithoutTLSHeadroom = %v, want %v", got, want)
			}
		})
	}
}

// TestContainerResources: a spec's own resources run; a spec without
// (stored before the spec had them) keeps the CPU limit its pods have.
func TestContainerResources(t *testing.T) {
	mine := corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}}
	if got := ContainerResources(&cachev1.MemcachedSpec{Resources: &mine}); !equality.Semantic.DeepEqual(got, mine) {
		t.Errorf("with the spec's resources: %v", got)
	}
	if got := ContainerResources(&cachev1.MemcachedSpec{}); got.Limits.Cpu().String() != "500m" {
		t.Errorf("without resources: cpu limit %s, want the 500m such pods always had", got.Limits.Cpu())
	}
	tls := &cachev1.MemcachedSpec{TLS: &cachev1.MemcachedTLS{SecretName: "cache-tls"}}
	if got := ContainerResources(tls); got.Limits.Memory().String() != "128Mi" {
		t.Errorf("serving TLS without resources: memory limit %s, want the 128Mi such pods always had", got.Limits.Memory())
	}
	if got := Resources(FromSpec(tls)); got.Limits.Memory().String() != "176Mi" {
		t.Errorf("derived for a spec serving TLS: memory limit %s, want 176Mi, with the TLS headroom", got.Limits.Memory())
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
