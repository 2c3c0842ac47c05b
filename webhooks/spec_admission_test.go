package webhooks_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
	"github.com/example-inc/memcached-operator/api/v1/gen"
	"github.com/example-inc/memcached-operator/controllers/operand"
	"github.com/example-inc/memcached-operator/hack/repo"
)

var _ = Describe("Memcached spec fields through the API server", func() {
	var ns string

	BeforeEach(func(ctx SpecContext) {
		ns = newNamespace(ctx, "spec")
		warnings.take()
	})

	It("stores what runs: memcached's defaults, resources derived from the memory, the default spread", func(ctx SpecContext) {
		Expect(k8sClient.Create(ctx, memcachedObject(ns, "defaults"))).To(Succeed())
		spec := stored(ctx, ns, "defaults").Spec
		Expect(spec.Memory.String()).To(Equal("64Mi"))
		Expect(spec.MaxItemSize.String()).To(Equal("1Mi"))
		Expect(spec.MaxConnections).To(HaveValue(Equal(int32(1024))))
		Expect(spec.Threads).To(HaveValue(Equal(int32(4))))
		Expect(operand.FromSpec(&spec)).To(Equal(operand.DefaultSettings()), "the CRD's defaults are the operator's")
		Expect(spec.Resources.Requests.Memory().String()).To(Equal("96Mi"))
		Expect(spec.Resources.Limits.Memory().String()).To(Equal("128Mi"))
		Expect(spec.Resources.Requests.Cpu().String()).To(Equal("50m"))
		Expect(spec.Resources.Limits).NotTo(HaveKey(corev1.ResourceCPU), "a CPU quota throttles memcached (docs/benchmarks.md)")
		Expect(spec.TopologySpreadConstraints).To(Equal(operand.DefaultTopologySpread()))
		Expect(spec.Monitoring).To(Equal(&cachev1.MemcachedMonitoring{Enabled: true}))
	})

	It("warns that memcached advises against more than 64 threads", func(ctx SpecContext) {
		mc := gen.Memcached(ns, "threads", gen.WithThreads(65))
		Expect(k8sClient.Create(ctx, mc)).To(Succeed())
		Expect(warnings.take()).To(ContainElement(HavePrefix("spec.threads: 65 worker threads: memcached warns against more than 64")))
	})

	Context("on update", func() {
		var mc *cachev1.Memcached

		BeforeEach(func(ctx SpecContext) { mc = createQuietly(ctx, gen.Memcached(ns, "cache")) })

		const restarts = " replaces every memcached pod, one at a time, and each new pod starts with an empty cache"
		DescribeTable("restart warnings:",
			func(ctx SpecContext, edit func(*cachev1.MemcachedSpec), want ...string) {
				edit(&mc.Spec)
				Expect(k8sClient.Update(ctx, mc)).To(Succeed())
				Expect(warnings.take()).To(ConsistOf(want))
			},
			Entry("warns that a new memory restarts the pods", func(s *cachev1.MemcachedSpec) { s.Memory = ptr.To(resource.MustParse("256Mi")) },
				"changing spec.memory (64Mi to 256Mi)"+restarts),
			Entry("names every change that restarts the pods", func(s *cachev1.MemcachedSpec) {
				s.Threads, s.MaxItemSize = ptr.To[int32](8), ptr.To(resource.MustParse("2Mi"))
				s.NodeSelector = map[string]string{"disk": "ssd"}
			}, "changing spec.maxItemSize (1Mi to 2Mi), spec.threads (4 to 8), the pods' placement"+restarts),
			Entry("warns that turning monitoring off restarts the pods", func(s *cachev1.MemcachedSpec) { s.Monitoring = &cachev1.MemcachedMonitoring{Enabled: false} },
				"changing spec.monitoring.enabled (true to false)"+restarts),
			Entry("says nothing of restarts when only the size changes", func(s *cachev1.MemcachedSpec) { s.Size = ptr.To[int32](5) }),
		)

		It("derives the resources again for a new memory, as it warns", func(ctx SpecContext) {
			mc.Spec.Memory = ptr.To(resource.MustParse("256Mi"))
			Expect(k8sClient.Update(ctx, mc)).To(Succeed())
			Expect(stored(ctx, ns, "cache").Spec.Resources.Limits.Memory().String()).To(Equal("344Mi"))
		})

		It("refuses a memory limit the new memory outgrows, and keeps the stored spec", func(ctx SpecContext) {
			mc.Spec.Resources = &corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("128Mi")}}
			Expect(k8sClient.Update(ctx, mc)).To(Succeed())
			mc.Spec.Memory = ptr.To(resource.MustParse("1Gi"))
			err := k8sClient.Update(ctx, mc)
			Expect(err).To(MatchError(ContainSubstring(`spec.resources.limits[memory]: Invalid value: "128Mi": must be at least 1116Mi: spec.memory (1Gi) plus 92Mi`)))
			Expect(stored(ctx, ns, "cache").Spec.Memory.String()).To(Equal("64Mi"))
		})

		It("refuses a lowered memory limit alone, not the memory request derived before it", func(ctx SpecContext) {
			Expect(mc.Spec.Resources.Requests.Memory().String()).To(Equal("96Mi"), "the request the webhook derived")
			mc.Spec.Resources.Limits[corev1.ResourceMemory] = resource.MustParse("10Mi")
			err := k8sClient.Update(ctx, mc)
			Expect(causes(err)).To(ConsistOf(HavePrefix(`spec.resources.limits[memory]: Invalid value: "10Mi": must be at least 96Mi`)), err.Error())
		})
	})
})

// The rules that never change are in the CRD schema too, so they hold where
// the webhooks do not run: a namespace an OLM install does not watch, or an
// operator that is down. This API server has the CRD and no webhooks.
var _ = Describe("the CRD schema without the webhooks", Ordered, func() {
	var c client.Client

	BeforeAll(func() {
		env := &envtest.Environment{
			CRDInstallOptions:     envtest.CRDInstallOptions{Paths: []string{repo.CRDDir()}, ErrorIfPathMissing: true},
			BinaryAssetsDirectory: repo.ControlPlaneDir(),
		}
		cfg, err := env.Start()
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(env.Stop)
		c, err = client.New(cfg, client.Options{Scheme: gen.Scheme()})
		Expect(err).NotTo(HaveOccurred())
	})

	DescribeTable("refuses what memcached refuses",
		func(ctx SpecContext, spec map[string]any, want string) {
			err := c.Create(ctx, memcachedObject("default", "schema", withSpec(spec)))
			Expect(err).To(MatchError(ContainSubstring(want)))
		},
		Entry("memory not in whole MiB", map[string]any{"memory": "100M"}, `spec.memory: Invalid value: "100M": must be a whole number of MiB`),
		Entry("item size of a thousandth of a byte", map[string]any{"maxItemSize": "1m"}, `spec.maxItemSize: Invalid value: "1m": must be a multiple of 512Ki`),
		Entry("item size not a multiple of 512Ki", map[string]any{"maxItemSize": "1280Ki"}, `spec.maxItemSize: Invalid value: "1280Ki": must be a multiple of 512Ki`),
		Entry("item size above half the memory", map[string]any{"memory": "3Mi", "maxItemSize": "2Mi"}, `spec: Invalid value: spec.maxItemSize must be at most half of spec.memory`),
		Entry("connections the threads use up", map[string]any{"threads": int64(8), "maxConnections": int64(55)}, `spec: Invalid value: spec.maxConnections must be at least 5 per thread plus 16`),
		Entry("no threads", map[string]any{"threads": int64(0)}, `spec.threads: Invalid value: 0: must be from 1 to 256, such as 4: memcached needs at least one worker thread`),
		Entry("one thread more than the most", map[string]any{"threads": int64(257), "maxConnections": int64(4096)},
			`spec.threads: Invalid value: 257: must be from 1 to 256, such as 4`),
		Entry("size 0", map[string]any{"size": int64(0)}, `spec.size in body should be greater than or equal to 1`),
	)

	DescribeTable("refuses a rollout pacing out of its range, and takes one within",
		func(ctx SpecContext, rollout map[string]any, want string) {
			err := c.Create(ctx, memcachedObject("default", "rollout", withSpec(map[string]any{"rollout": rollout})))
			if want == "" {
				Expect(err).NotTo(HaveOccurred())
				Expect(c.Delete(ctx, memcachedObject("default", "rollout"))).To(Succeed())
				return
			}
			Expect(err).To(MatchError(ContainSubstring(want)))
		},
		Entry("an unknown pacing", map[string]any{"pacing": "Sometimes"}, `spec.rollout.pacing: Unsupported value: "Sometimes"`),
		Entry("no items", map[string]any{"itemsPercent": int64(0)}, `spec.rollout.itemsPercent in body should be greater than or equal to 1`),
		Entry("more than every point", map[string]any{"hitRatioPoints": int64(101)}, `spec.rollout.hitRatioPoints in body should be less than or equal to 100`),
		Entry("no time to warm up", map[string]any{"warmupTimeout": "0s"}, `spec.rollout.warmupTimeout must be more than 0s and at most 24h`),
		Entry("more than a day", map[string]any{"warmupTimeout": "25h"}, `spec.rollout.warmupTimeout must be more than 0s and at most 24h`),
		Entry("every field within its range", map[string]any{"pacing": "None", "itemsPercent": int64(100), "hitRatioPoints": int64(0), "warmupTimeout": "24h"}, ""),
	)

	// A rule across fields holds only once each field meets its own, so a
	// field the user left to its default is not reported with the one they
	// got wrong.
	DescribeTable("names only the fields the user got wrong",
		func(ctx SpecContext, spec map[string]any, want ...string) {
			err := c.Create(ctx, memcachedObject("default", "wrong", withSpec(spec)))
			Expect(causes(err)).To(ConsistOf(want), err.Error())
		},
		Entry("memory below 1Mi", map[string]any{"memory": "100Ki"},
			`spec.memory: Invalid value: "100Ki": must be a whole number of MiB, at least 1Mi, such as 64Mi or 2Gi: memcached takes its memory in MiB`),
		Entry("no threads, and connections too few for the default threads", map[string]any{"threads": int64(0), "maxConnections": int64(21)},
			`spec.threads: Invalid value: 0: must be from 1 to 256, such as 4: memcached needs at least one worker thread, and advises no more than the node's cores`),
		Entry("too many threads, and connections too few for them", map[string]any{"threads": int64(300), "maxConnections": int64(1024)},
			`spec.threads: Invalid value: 300: must be from 1 to 256, such as 4: memcached needs at least one worker thread, and advises no more than the node's cores`),
	)

	It("admits the boundaries memcached accepts", func(ctx SpecContext) {
		Expect(c.Create(ctx, memcachedObject("default", "edges", withSpec(map[string]any{
			"memory": "1Mi", "maxItemSize": "512Ki", "threads": int64(1), "maxConnections": int64(21)})))).To(Succeed())
		Expect(c.Create(ctx, memcachedObject("default", "most-threads", withSpec(map[string]any{
			"threads": int64(256), "maxConnections": int64(1296)})))).To(Succeed())
	})
})
