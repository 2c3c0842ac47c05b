package webhooks_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
	"github.com/example-inc/memcached-operator/api/v1/gen"
)

// Objects are sent as unstructured so that a test can put anything in them:
// a string or a float for spec.size, a spec that is not an object, no spec.

type objectOption func(u *unstructured.Unstructured)

// memcachedObject is a Memcached named name with spec {} unless opts say
// otherwise.
func memcachedObject(ns, name string, opts ...objectOption) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": cachev1.GroupVersion.String(),
		"kind":       "Memcached",
		"metadata":   map[string]any{"name": name, "namespace": ns},
		"spec":       map[string]any{},
	}}
	for _, o := range opts {
		o(u)
	}
	return u
}

// withSize sets spec.size to any JSON value.
func withSize(v any) objectOption {
	return func(u *unstructured.Unstructured) { u.Object["spec"] = map[string]any{"size": v} }
}

// withSpec sets spec to any JSON value.
func withSpec(v any) objectOption {
	return func(u *unstructured.Unstructured) { u.Object["spec"] = v }
}

func withoutSpec() objectOption {
	return func(u *unstructured.Unstructured) { delete(u.Object, "spec") }
}

// withGenerateName leaves the name to the API server.
func withGenerateName(prefix string) objectOption {
	return func(u *unstructured.Unstructured) {
		u.SetName("")
		u.SetGenerateName(prefix)
	}
}

func newNamespace(ctx context.Context, prefix string) string {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-"}}
	Expect(k8sClient.Create(ctx, ns)).To(Succeed())
	return ns.Name
}

// stored is the Memcached ns/name as the API server stores it.
func stored(ctx context.Context, ns, name string) *cachev1.Memcached {
	GinkgoHelper()
	mc := &cachev1.Memcached{}
	Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, mc)).To(Succeed())
	return mc
}

func sizeOf(ctx context.Context, ns, name string) *int32 { return stored(ctx, ns, name).Spec.Size }

var _ = Describe("Memcached admission through the API server", func() {
	var ns string

	BeforeEach(func(ctx SpecContext) {
		ns = newNamespace(ctx, "mc")
		warnings.take()
	})

	DescribeTable("rejects a bad Memcached and stores nothing",
		func(ctx SpecContext, name string, opts []objectOption, want ...string) {
			obj := memcachedObject(ns, name, opts...)
			err := k8sClient.Create(ctx, obj)
			Expect(err).To(HaveOccurred(), "created %s", obj.GetName())
			GinkgoWriter.Println(err)

			var status apierrors.APIStatus
			Expect(errors.As(err, &status)).To(BeTrue(), "not an API status: %v", err)
			Expect(status.Status().Code).To(BeEquivalentTo(http.StatusUnprocessableEntity), err.Error())
			Expect(apierrors.IsInvalid(err)).To(BeTrue(), err.Error())
			for _, w := range want {
				Expect(err.Error()).To(ContainSubstring(w))
			}

			list := &cachev1.MemcachedList{}
			Expect(k8sClient.List(ctx, list, client.InNamespace(ns))).To(Succeed())
			Expect(list.Items).To(BeEmpty())
			if name != "" {
				err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &cachev1.Memcached{})
				Expect(apierrors.IsNotFound(err)).To(BeTrue(), "Get %q: %v", name, err)
			}
		},
		// spec.size out of range: below 1 the mutating webhook refuses it,
		// before the CRD's minimum would in other words; the validating
		// webhook holds the policy's range. One message, one field path.
		Entry("negative size", "neg", opts(withSize(-1)),
			`admission webhook "mmemcached-v1.kb.io" denied the request: `+
				`Memcached.cache.example.com "neg" is invalid: spec.size: Invalid value: -1: must be at least 1`),
		Entry("zero size", "zero", opts(withSize(0)),
			`admission webhook "mmemcached-v1.kb.io" denied the request: `+
				`Memcached.cache.example.com "zero" is invalid: spec.size: Invalid value: 0: must be at least 1`),
		Entry("size just over the maximum", "seventeen", opts(withSize(17)),
			`admission webhook "vmemcached-v1.kb.io" denied the request`,
			`Memcached.cache.example.com "seventeen" is invalid: spec.size: Invalid value: 17: must be no more than 16`),
		Entry("largest int32", "maxint", opts(withSize(int64(2147483647))), `spec.size: Invalid value: 2147483647: must be no more than 16`),
		Entry("smallest int32", "minint", opts(withSize(int64(-2147483648))), `spec.size: Invalid value: -2147483648: must be at least 1`),

		// Values of the wrong type. The API server checks the CRD schema
		// only after the mutating webhooks, which let a Memcached they
		// cannot decode pass unchanged, so the schema answers: 422 with
		// the field path.
		Entry("size beyond int32", "overflow", opts(withSize(int64(2147483648))),
			`Memcached.cache.example.com "overflow" is invalid`, `2147483648`, `int32 in spec.size`),
		Entry("size below int32", "underflow", opts(withSize(int64(-2147483649))), `-2147483649`, `int32 in spec.size`),
		Entry("size as a string", "strsize", opts(withSize("3")), `spec.size: Invalid value: "string": spec.size in body must be of type integer`),
		Entry("size as a fraction", "fraction", opts(withSize(2.5)), `spec.size: Invalid value: "float64": spec.size in body must be of type int32`),
		Entry("size as a bool", "boolsize", opts(withSize(true)), `spec.size in body must be of type int32`),
		Entry("size as an object", "objsize", opts(withSize(map[string]any{"value": int64(3)})), `spec.size in body must be of type int32`),
		Entry("threads as a string", "strthreads", specOpts(map[string]any{"threads": "4"}),
			`spec.threads: Invalid value: "string": spec.threads in body must be of type integer`),
		Entry("memory that is not a quantity", "lots", specOpts(map[string]any{"memory": "lots"}),
			`spec.memory: Invalid value: "lots": spec.memory in body should match`),

		// spec itself.
		Entry("spec as a string", "strspec", opts(withSpec("size=3")), `spec: Invalid value: "string": spec in body must be of type object`),
		Entry("spec as a list", "listspec", opts(withSpec([]any{int64(3)})), `spec in body must be of type object`),
		Entry("spec as a number", "numspec", opts(withSpec(int64(3))), `spec in body must be of type object`),

		// memcached's own start-up rules, in the CRD schema (CEL) and the
		// validating webhook; the schema answers first. The rules' other
		// cases are the schema's alone ("the CRD schema without the webhooks").
		Entry("memory not in whole MiB", "halfmib", specOpts(map[string]any{"memory": "1536Ki"}),
			`spec.memory: Invalid value: "1536Ki": must be a whole number of MiB`),
		Entry("no memory", "nomem", specOpts(map[string]any{"memory": "0"}), `spec.memory: Invalid value: "0": must be a whole number of MiB, at least 1Mi`),
		Entry("item size above 1Gi", "hugeitem", specOpts(map[string]any{"memory": "8Gi", "maxItemSize": "2Gi"}),
			`spec.maxItemSize: Invalid value: "2Gi": must be a multiple of 512Ki from 512Ki to 1Gi`),
		Entry("item size above half the memory", "halfmem", specOpts(map[string]any{"memory": "7Mi", "maxItemSize": "4Mi"}),
			`spec: Invalid value: spec.maxItemSize must be at most half of spec.memory: memcached refuses a larger item size`),
		// 256 is admitted (below); with the connections it needs, one more
		// is refused by the threads' own rule alone.
		Entry("one thread more than the most", "manythreads", specOpts(map[string]any{"threads": int64(257), "maxConnections": int64(4096)}),
			`spec.threads: Invalid value: 257: must be from 1 to 256, such as 4`),
		Entry("no connections", "noconns", specOpts(map[string]any{"maxConnections": int64(0)}),
			`spec.maxConnections: Invalid value: 0: spec.maxConnections in body should be greater than or equal to 1`),
		Entry("connections the threads use up", "fewconns", specOpts(map[string]any{"maxConnections": int64(30)}),
			`spec: Invalid value: spec.maxConnections must be at least 5 per thread plus 16: memcached counts 5 file descriptors per thread against it`),

		// What only the webhook knows: the memory limit memcached outgrows,
		// and the pod spec's rules for resources and placement.
		Entry("memory limit below the items' memory", "oom", specOpts(map[string]any{
			"memory": "256Mi", "resources": map[string]any{"limits": map[string]any{"memory": "256Mi"}}}),
			`admission webhook "vmemcached-v1.kb.io" denied the request`,
			`spec.resources.limits[memory]: Invalid value: "256Mi": must be at least 300Mi: spec.memory (256Mi) plus 44Mi`,
			`the kernel kills memcached once its cache fills`),
		Entry("CPU request above its limit", "cpu", specOpts(map[string]any{
			"resources": map[string]any{"requests": map[string]any{"cpu": "2"}, "limits": map[string]any{"cpu": "1"}}}),
			`spec.resources.requests[cpu]: Invalid value: "2": must be less than or equal to cpu limit of 1`),
		Entry("a resource a container cannot ask for", "gpu", specOpts(map[string]any{
			"resources": map[string]any{"limits": map[string]any{"pods": "1"}}}),
			`spec.resources.limits[pods]: Unsupported value: "pods"`),
		Entry("a toleration with operator Exists and a value", "tolvalue", specOpts(map[string]any{
			"tolerations": []any{map[string]any{"key": "dedicated", "operator": "Exists", "value": "cache"}}}),
			`spec.tolerations[0].value: Invalid value: "cache": must be empty when operator is Exists`),
		Entry("a toleration with an unknown effect", "toleffect", specOpts(map[string]any{
			"tolerations": []any{map[string]any{"key": "dedicated", "value": "cache", "effect": "Sometimes"}}}),
			`spec.tolerations[0].effect: Unsupported value: "Sometimes"`),
		Entry("a node selector key that is not a label key", "selector", specOpts(map[string]any{
			"nodeSelector": map[string]any{"disk type": "ssd"}}),
			`spec.nodeSelector: Invalid value: "disk type": name part must consist of`),
		Entry("a spread with no skew", "skew", specOpts(map[string]any{
			"topologySpreadConstraints": []any{map[string]any{"maxSkew": int64(0), "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "DoNotSchedule"}}}),
			`spec.topologySpreadConstraints[0].maxSkew: Invalid value: 0: must be greater than zero`),
		Entry("a required node affinity without terms", "affinity", specOpts(map[string]any{
			"affinity": map[string]any{"nodeAffinity": map[string]any{"requiredDuringSchedulingIgnoredDuringExecution": map[string]any{"nodeSelectorTerms": []any{}}}}}),
			`spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms: Required value`),
		Entry("a pod anti-affinity without a topology key", "antiaffinity", specOpts(map[string]any{
			"affinity": map[string]any{"podAntiAffinity": map[string]any{"requiredDuringSchedulingIgnoredDuringExecution": []any{
				map[string]any{"labelSelector": map[string]any{"matchLabels": map[string]any{"app": "x"}}}}}}}),
			`spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey: Required value`),
		Entry("a priority class name that is not a name", "priority", specOpts(map[string]any{"priorityClassName": "High_Priority"}),
			`spec.priorityClassName: Invalid value: "High_Priority": a lowercase RFC 1123 subdomain`),

		// Names that make invalid children. The API server's own rule
		// (DNS-1123 subdomain) rejects some before any webhook; the rest
		// pass it and need the validating webhook (DNS-1035 label).
		Entry("name with dots", "cache.example", nil,
			`Memcached.cache.example.com "cache.example" is invalid: metadata.name: Invalid value: "cache.example": the name is also the Memcached's Service name, so: a DNS-1035 label must consist of`),
		Entry("name in upper case", "Cache", nil, `metadata.name: Invalid value: "Cache": a lowercase RFC 1123 subdomain must consist of`),
		Entry("name ending in a hyphen", "cache-", nil, `metadata.name: Invalid value: "cache-": a lowercase RFC 1123 subdomain must consist of`),
		Entry("name with an underscore", "my_cache", nil, `metadata.name: Invalid value: "my_cache": a lowercase RFC 1123 subdomain must consist of`),
		Entry("name of 254 characters", strings.Repeat("b", 254), nil, `must be no more than 253 characters`),
		Entry("bad name and bad size together", "two.errors", opts(withSize(99)),
			`Memcached.cache.example.com "two.errors" is invalid: [`,
			`metadata.name: Invalid value: "two.errors": the name is also the Memcached's Service name, so: a DNS-1035 label`,
			`spec.size: Invalid value: 99: must be no more than 16`),
	)

	// Each error names a field the user wrote wrong. A rule across fields,
	// or a value the webhook derived, is reported only when it is the
	// cause: not beside the field it was derived from.
	DescribeTable("names only the fields the user got wrong",
		func(ctx SpecContext, spec map[string]any, want ...string) {
			err := k8sClient.Create(ctx, memcachedObject(ns, "wrong", withSpec(spec)))
			Expect(causes(err)).To(ConsistOf(want), err.Error())
		},
		Entry("memory below 1Mi, item size left to its default", map[string]any{"memory": "100Ki"},
			`spec.memory: Invalid value: "100Ki": must be a whole number of MiB, at least 1Mi, such as 64Mi or 2Gi: memcached takes its memory in MiB`),
		Entry("memory not in whole MiB, below twice the default item size", map[string]any{"memory": "1536Ki"},
			`spec.memory: Invalid value: "1536Ki": must be a whole number of MiB, at least 1Mi, such as 64Mi or 2Gi: memcached takes its memory in MiB`),
		Entry("bad memory and bad item size, each once", map[string]any{"memory": "100Ki", "maxItemSize": "1280Ki"},
			`spec.memory: Invalid value: "100Ki": must be a whole number of MiB, at least 1Mi, such as 64Mi or 2Gi: memcached takes its memory in MiB`,
			`spec.maxItemSize: Invalid value: "1280Ki": must be a multiple of 512Ki from 512Ki to 1Gi, such as 1Mi or 4Mi: memcached refuses other item sizes`),
		Entry("no threads", map[string]any{"threads": int64(0)},
			`spec.threads: Invalid value: 0: must be from 1 to 256, such as 4: memcached needs at least one worker thread, and advises no more than the node's cores`),
		Entry("no threads, and connections enough for one", map[string]any{"threads": int64(0), "maxConnections": int64(21)},
			`spec.threads: Invalid value: 0: must be from 1 to 256, such as 4: memcached needs at least one worker thread, and advises no more than the node's cores`),
		Entry("a memory limit alone", map[string]any{"resources": map[string]any{"limits": map[string]any{"memory": "10Mi"}}},
			`spec.resources.limits[memory]: Invalid value: "10Mi": must be at least 96Mi: spec.memory (64Mi) plus 32Mi that memcached uses `+
				`beside its items (1024 connections, 4 threads, the hash table); below that the kernel kills memcached once its cache fills`),
		// A request the limit cannot hold even once raised is a cause of its own.
		Entry("a memory request above what the limit must be", map[string]any{"resources": map[string]any{
			"requests": map[string]any{"memory": "1Gi"}, "limits": map[string]any{"memory": "10Mi"}}},
			`spec.resources.limits[memory]: Invalid value: "10Mi": must be at least 96Mi: spec.memory (64Mi) plus 32Mi that memcached uses `+
				`beside its items (1024 connections, 4 threads, the hash table); below that the kernel kills memcached once its cache fills`,
			`spec.resources.requests[memory]: Invalid value: "1Gi": must be less than or equal to memory limit of 10Mi`),
	)

	DescribeTable("admits and defaults a good Memcached",
		func(ctx SpecContext, name string, opts []objectOption, wantSize int32, wantWarning string) {
			Expect(k8sClient.Create(ctx, memcachedObject(ns, name, opts...))).To(Succeed())
			Expect(sizeOf(ctx, ns, name)).To(HaveValue(Equal(wantSize)))
			got := warnings.take()
			if wantWarning == "" {
				Expect(got).To(BeEmpty())
			} else {
				Expect(got).To(ContainElement(ContainSubstring(wantWarning)))
			}
		},
		Entry("size omitted", "omitted", nil, int32(3), ""),
		Entry("size null", "nullsize", opts(withSize(nil)), int32(3), ""),
		// Every spec field has a default, so the spec may be left out too.
		Entry("spec omitted", "nospec", opts(withoutSpec()), int32(3), ""),
		Entry("spec null", "nullspec", opts(withSpec(nil)), int32(3), ""),
		Entry("size 1, with a warning", "one", opts(withSize(1)), int32(1), "spec.size: 1 pod gives no redundancy: "),
		Entry("a float that is a whole number", "wholefloat", opts(withSize(4.0)), int32(4), ""),
		Entry("the most threads, with the connections they need", "maxthreads",
			specOpts(map[string]any{"threads": int64(256), "maxConnections": int64(1296)}), int32(3),
			"spec.threads: 256 worker threads: memcached warns against more than 64"),
	)

	It("admits a generated name, which the API server keeps within 63 characters", func(ctx SpecContext) {
		for _, prefix := range []string{"gen-", strings.Repeat("g", 70) + "-"} {
			obj := memcachedObject(ns, "", withGenerateName(prefix))
			Expect(k8sClient.Create(ctx, obj)).To(Succeed())
			Expect(len(obj.GetName())).To(BeNumerically("<=", 63))
			Expect(sizeOf(ctx, ns, obj.GetName())).To(HaveValue(Equal(int32(3))))
		}
	})

	Context("on update", func() {
		var mc *cachev1.Memcached

		BeforeEach(func(ctx SpecContext) {
			mc = gen.Memcached(ns, "cache")
			Expect(k8sClient.Create(ctx, mc)).To(Succeed())
			Expect(mc.Spec.Size).To(HaveValue(Equal(int32(3))), "the create response carries the default")
		})

		It("never blocks a status update", func(ctx SpecContext) {
			mc.Status.ReadyReplicas = 3
			mc.Status.Nodes = []string{"cache-a", "cache-b", "cache-c"}
			Expect(k8sClient.Status().Update(ctx, mc)).To(Succeed())

			// Status written through the main resource is dropped by the
			// API server, but the update is not refused.
			mc.Status.ReadyReplicas = 2
			Expect(k8sClient.Update(ctx, mc)).To(Succeed())
		})

		It("rejects a size over the maximum and keeps the stored size", func(ctx SpecContext) {
			mc.Spec.Size = ptr.To[int32](40)
			err := k8sClient.Update(ctx, mc)
			Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
			Expect(err.Error()).To(ContainSubstring(`Memcached.cache.example.com "cache" is invalid: spec.size: Invalid value: 40: must be no more than 16`))
			Expect(sizeOf(ctx, ns, "cache")).To(HaveValue(Equal(int32(3))))
		})

		It("defaults a removed size, or a removed spec, again", func(ctx SpecContext) {
			for _, removed := range []string{"/spec/size", "/spec"} {
				patch := []byte(`[{"op":"replace","path":"/spec/size","value":5}]`)
				Expect(k8sClient.Patch(ctx, mc, client.RawPatch("application/json-patch+json", patch))).To(Succeed())
				Expect(sizeOf(ctx, ns, "cache")).To(HaveValue(Equal(int32(5))))

				patch = []byte(`[{"op":"remove","path":"` + removed + `"}]`)
				Expect(k8sClient.Patch(ctx, mc, client.RawPatch("application/json-patch+json", patch))).To(Succeed())
				Expect(sizeOf(ctx, ns, "cache")).To(HaveValue(Equal(int32(3))), "after removing %s", removed)
			}
		})

		It("holds the scale subresource to the policy", func(ctx SpecContext) {
			scale := &autoscalingv1.Scale{}
			Expect(k8sClient.SubResource("scale").Get(ctx, mc, scale)).To(Succeed())
			Expect(scale.Spec.Replicas).To(Equal(int32(3)))

			scale.Spec.Replicas = 40
			err := k8sClient.SubResource("scale").Update(ctx, mc, client.WithSubResourceBody(scale))
			Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
			Expect(err.Error()).To(ContainSubstring(`admission webhook "vmemcachedscale-v1.kb.io" denied the request`))
			// The same words as for the Memcached itself: the Scale's
			// replicas are its spec.size.
			Expect(err.Error()).To(HaveSuffix(`Memcached.cache.example.com "cache" is invalid: spec.size: Invalid value: 40: must be no more than 16`))

			// Below 1 the mutating webhook answers, before the CRD's minimum
			// and the scale subresource's own check would, each in its words.
			for _, n := range []int32{0, -1} {
				scale.Spec.Replicas = n
				err = k8sClient.SubResource("scale").Update(ctx, mc, client.WithSubResourceBody(scale))
				Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
				Expect(err.Error()).To(Equal(fmt.Sprintf(`admission webhook "mmemcachedscale-v1.kb.io" denied the request: `+
					`Memcached.cache.example.com "cache" is invalid: spec.size: Invalid value: %d: must be at least 1`, n)))
			}
			Expect(sizeOf(ctx, ns, "cache")).To(HaveValue(Equal(int32(3))))

			scale.Spec.Replicas = 1
			Expect(k8sClient.SubResource("scale").Update(ctx, mc, client.WithSubResourceBody(scale))).To(Succeed())
			Expect(warnings.take()).To(ContainElement(HavePrefix("spec.size: 1 pod gives no redundancy: ")))
			Expect(sizeOf(ctx, ns, "cache")).To(HaveValue(Equal(int32(1))))
		})

		It("admits a delete", func(ctx SpecContext) {
			Expect(k8sClient.Delete(ctx, mc)).To(Succeed())
			Eventually(func() bool {
				err := k8sClient.Get(ctx, client.ObjectKeyFromObject(mc), &cachev1.Memcached{})
				return apierrors.IsNotFound(err)
			}).WithTimeout(10 * time.Second).Should(BeTrue())
		})
	})
})

// causes are the field errors of an Invalid API error, each as
// "field: message", as the API server words them.
func causes(err error) []string {
	GinkgoHelper()
	var status apierrors.APIStatus
	Expect(errors.As(err, &status)).To(BeTrue(), "not an API status: %v", err)
	Expect(status.Status().Details).NotTo(BeNil(), err.Error())
	var out []string
	for _, c := range status.Status().Details.Causes {
		out = append(out, c.Field+": "+c.Message)
	}
	return out
}

func opts(o ...objectOption) []objectOption { return o }

func specOpts(spec map[string]any) []objectOption { return opts(withSpec(spec)) }
