package webhooks_test

import (
	"encoding/json"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
	"github.com/example-inc/memcached-operator/api/v1/gen"
	"github.com/example-inc/memcached-operator/controllers/operand"
	"github.com/example-inc/memcached-operator/webhooks"
)

// patched returns obj (a Memcached, or its JSON) as the mutating webhook of
// policy would store it, on create (old nil) or on update.
func patched(t *testing.T, policy webhooks.SizePolicy, obj any, old *cachev1.Memcached) []byte {
	t.Helper()
	opts, op := []reviewOption{object(obj)}, admissionv1.Create
	if old != nil {
		opts, op = append(opts, oldObject(old)), admissionv1.Update
	}
	resp := post(t, newWebhookHandler(t, policy), mutatePath, review(op, opts...), "application/json")
	if !resp.Allowed {
		t.Fatalf("denied: %+v", resp.Result)
	}
	doc := rawOf(obj)
	if len(resp.Patch) == 0 {
		return doc
	}
	patch, err := jsonpatch.DecodePatch(resp.Patch)
	if err != nil {
		t.Fatalf("patch %s: %v", resp.Patch, err)
	}
	if doc, err = patch.Apply(doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

func defaulted(t *testing.T, policy webhooks.SizePolicy, obj any, old *cachev1.Memcached) *cachev1.Memcached {
	t.Helper()
	mc := &cachev1.Memcached{}
	if err := json.Unmarshal(patched(t, policy, obj, old), mc); err != nil {
		t.Fatal(err)
	}
	return mc
}

func TestSpecDefaults(t *testing.T) {
	// resources are what derive gives a Memcached of memory with opts: an
	// operator before this one derived a CPU limit of 125m per thread
	// (ResourcesWithCPULimit), and gave a TLS Memcached no room for TLS
	// sessions (ResourcesWithoutTLSHeadroom).
	resources := func(derive func(operand.Settings) corev1.ResourceRequirements, memory string, opts ...gen.MemcachedOption) *corev1.ResourceRequirements {
		r := derive(operand.FromSpec(&gen.Memcached("ns", "a", append(opts, gen.WithMemory(memory))...).Spec))
		return &r
	}
	derived := func(memory string) *corev1.ResourceRequirements { return resources(operand.Resources, memory) }
	earlier := resources(operand.ResourcesWithCPULimit, "64Mi")
	beforeTLSHeadroom := resources(operand.ResourcesWithoutTLSHeadroom, "64Mi", gen.WithTLS("tls"))
	mine := &corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}}
	m := func(opts ...gen.MemcachedOption) *cachev1.Memcached { return gen.Memcached("ns", "a", opts...) }
	mem, size, tls := gen.WithMemory, gen.WithSize, gen.WithTLS("tls")
	res := func(r *corev1.ResourceRequirements) gen.MemcachedOption {
		return func(mc *cachev1.Memcached) { mc.Spec.Resources = r }
	}
	tests := []struct {
		name          string
		obj, old      *cachev1.Memcached // a create without old
		wantResources *corev1.ResourceRequirements
		wantSpread    bool
	}{
		{"create: resources from the memory, no CPU limit, the default spread", m(mem("256Mi")), nil, derived("256Mi"), true},
		{"create: the user's resources and placement are kept",
			m(res(mine), func(mc *cachev1.Memcached) { mc.Spec.NodeSelector = map[string]string{"disk": "ssd"} }), nil, mine, false},
		{"update: derived resources follow a new memory",
			m(mem("512Mi"), res(derived("64Mi"))), m(mem("64Mi"), res(derived("64Mi"))), derived("512Mi"), true},
		{"update: the user's resources stay when the memory changes", m(mem("512Mi"), res(mine)), m(mem("64Mi"), res(mine)), mine, true},
		{"update: resources the update sets are the user's", m(mem("512Mi"), res(mine)), m(mem("64Mi"), res(derived("64Mi"))), mine, true},
		// An upgrade from an operator that derived a CPU limit: a change
		// of the size alone keeps the stored resources, which rewriting
		// would restart every pod for.
		{"update: the earlier derived resources stay when only the size changes",
			m(size(5), mem("64Mi"), res(earlier)), m(size(3), mem("64Mi"), res(earlier)), earlier, true},
		{"update: the earlier derived resources stay when an apply leaves them out",
			m(size(5), mem("64Mi")), m(size(3), mem("64Mi"), res(earlier)), earlier, true},
		{"update: none stored (before the spec had resources) becomes what the pods run", m(size(5)), m(size(3)), earlier, true},
		// A new memory replaces the pods anyway: they get today's defaults.
		{"update: the earlier derived resources follow a new memory, derived as today",
			m(mem("512Mi"), res(earlier)), m(mem("64Mi"), res(earlier)), derived("512Mi"), true},
		{"update: a TLS Memcached's resources from before the TLS headroom stay when only the size changes",
			m(size(5), tls, mem("64Mi"), res(beforeTLSHeadroom)), m(size(3), tls, mem("64Mi"), res(beforeTLSHeadroom)), beforeTLSHeadroom, true},
		{"update: a TLS Memcached's resources from before the TLS headroom follow a new memory",
			m(tls, mem("512Mi"), res(beforeTLSHeadroom)), m(tls, mem("64Mi"), res(beforeTLSHeadroom)),
			resources(operand.Resources, "512Mi", tls), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mc := defaulted(t, webhooks.DefaultSizePolicy(), tt.obj, tt.old)
			if !equality.Semantic.DeepEqual(tt.wantResources, mc.Spec.Resources) {
				t.Errorf("resources = %v, want %v", mc.Spec.Resources, tt.wantResources)
			}
			var wantSpread []corev1.TopologySpreadConstraint
			if tt.wantSpread {
				wantSpread = operand.DefaultTopologySpread()
			}
			if diff := cmp.Diff(wantSpread, mc.Spec.TopologySpreadConstraints); diff != "" {
				t.Errorf("spread (-want +got):\n%s", diff)
			}
		})
	}
}

// TestMonitoringDefaults: monitoring is on for a new Memcached and never
// turned on or off by an update that does not say so, so that an upgraded
// operator replaces no pod of a Memcached created before it.
func TestMonitoringDefaults(t *testing.T) {
	on, off := &cachev1.MemcachedMonitoring{Enabled: true}, &cachev1.MemcachedMonitoring{Enabled: false}
	tests := []struct {
		name     string
		obj, old *cachev1.Memcached
		want     *cachev1.MemcachedMonitoring
	}{
		{"create: on", gen.Memcached("ns", "a"), nil, on},
		{"create: off when asked", gen.Memcached("ns", "a", gen.WithMonitoring(false)), nil, off},
		{"update: one stored before monitoring stays without it", gen.Memcached("ns", "a", gen.WithSize(5)), gen.Memcached("ns", "a", gen.WithSize(3)), nil},
		{"update: an apply that leaves it out keeps it on", gen.Memcached("ns", "a", gen.WithSize(5)), gen.Memcached("ns", "a", gen.WithMonitoring(true)), on},
		{"update: turned off", gen.Memcached("ns", "a", gen.WithMonitoring(false)), gen.Memcached("ns", "a", gen.WithMonitoring(true)), off},
		{"update: turned on for one stored before monitoring", gen.Memcached("ns", "a", gen.WithMonitoring(true)), gen.Memcached("ns", "a"), on},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, defaulted(t, webhooks.DefaultSizePolicy(), tt.obj, tt.old).Spec.Monitoring); diff != "" {
				t.Errorf("spec.monitoring (-want +got):\n%s", diff)
			}
		})
	}
}

// TestUndecodableMemcachedIsLeftToTheSchema: a Memcached whose fields have
// the wrong type passes the mutating webhook unchanged, so that the API
// server's schema check refuses it with a 422 and the field path.
func TestUndecodableMemcachedIsLeftToTheSchema(t *testing.T) {
	h := newWebhookHandler(t, webhooks.DefaultSizePolicy())
	for _, spec := range []string{`{"size":"3"}`, `{"size":2.5}`, `{"size":2147483648}`, `{"memory":"lots"}`, `"size=3"`} {
		body := []byte(`{"apiVersion":"cache.example.com/v1","kind":"Memcached","metadata":{"name":"cache"},"spec":` + spec + `}`)
		resp := post(t, h, mutatePath, review(admissionv1.Create, object(body)), "application/json")
		if !resp.Allowed || len(resp.Patch) > 0 {
			t.Errorf("spec %s: allowed %v, patch %s; want allowed unchanged", spec, resp.Allowed, resp.Patch)
		}
	}
}
