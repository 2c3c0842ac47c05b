package e2e

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
	"github.com/example-inc/memcached-operator/api/v1/gen"
	"github.com/example-inc/memcached-operator/controllers"
	"github.com/example-inc/memcached-operator/test/framework/harness"
	"github.com/example-inc/memcached-operator/test/framework/memcache"
)

// A rollout of real memcached pods whose clients read all the time: each
// new pod is held unready, while every old pod still serves, until the
// spec refills it as clients would on their misses.
var _ = Describe("rollouts paced by warmth on the real node", Ordered, Label(labelHost, labelNode), func() {
	const (
		ns = "warmth"
		// items is what each pod holds before the rollout; refill is
		// what the spec writes into a new pod: more than half of it.
		items, refill = 300, 200
	)
	var c *realCluster

	BeforeAll(func(ctx SpecContext) {
		c = cluster
		c.operatorIn(ctx, "warmth-operator", ns)
	}, NodeTimeout(5*time.Minute))

	It("holds each new pod of a rollout until it is refilled, every old pod serving meanwhile and clients' server list changing one pod at a time", func(ctx SpecContext) {
		mc := gen.Memcached(ns, "warm", gen.WithSize(3))
		Expect(c.k8s.Create(ctx, mc)).To(Succeed())
		pods := c.serving(ctx, mc, 3, memcachedA.Ref)
		original := map[types.UID]bool{}
		readers := &reading{}
		DeferCleanup(readers.stop)
		for _, p := range pods {
			original[p.UID] = true
			fill(ctx, p, items)
			readers.start(ctx, p)
		}
		servers := c.watchServerList(ctx, mc, 3)

		By("changing the pods' command, which replaces them")
		patch := client.MergeFrom(mc.DeepCopy())
		mc.Spec.MaxConnections = ptr.To[int32](2048)
		Expect(c.k8s.Patch(ctx, mc, patch)).To(Succeed())

		warmed := map[types.UID]bool{}
		for i := range 3 {
			var fresh corev1.Pod
			eventually(ctx, func(g Gomega) {
				var list corev1.PodList
				g.Expect(c.k8s.List(ctx, &list, client.InNamespace(ns), podsOf(mc))).To(Succeed())
				old := 0
				found := false
				for _, p := range list.Items {
					switch {
					case original[p.UID] && p.DeletionTimestamp == nil:
						old++
					case !original[p.UID] && !warmed[p.UID] && p.Status.Phase == corev1.PodRunning && containersReady(&p):
						fresh, found = p, true
					}
				}
				g.Expect(found).To(BeTrue(), "a new pod whose containers are ready")
				g.Expect(harness.PodReady(&fresh)).To(BeFalse(), "pod %s held unready while cold", fresh.Name)
				g.Expect(old).To(Equal(3-i), "old pods still serving while pod %s is cold", fresh.Name)
				got := &cachev1.Memcached{}
				g.Expect(c.k8s.Get(ctx, client.ObjectKeyFromObject(mc), got)).To(Succeed())
				g.Expect(meta.FindStatusCondition(got.Status.Conditions, cachev1.ConditionWarming)).To(And(Not(BeNil()),
					HaveField("Status", metav1.ConditionTrue),
					HaveField("Message", HavePrefix(fmt.Sprintf("pod %s: it holds 0 items", fresh.Name)))))
			}).Should(Succeed())

			By(fmt.Sprintf("refilling %s with %d of its peers' %d items", fresh.Name, refill, items))
			fill(ctx, fresh, refill)
			eventually(ctx, func(g Gomega) {
				p := &corev1.Pod{}
				g.Expect(c.k8s.Get(ctx, client.ObjectKeyFromObject(&fresh), p)).To(Succeed())
				g.Expect(harness.PodReady(p)).To(BeTrue(), "pod %s ready once warm", p.Name)
				// The operator may judge it while the spec still writes: at
				// half its peers' median, wherever the refill then is.
				g.Expect(p.Status.Conditions).To(ContainElement(And(HaveField("Type", controllers.WarmCondition),
					HaveField("Reason", "PodWarm"), HaveField("Message", MatchRegexp(`^it holds \d+ items, ([5-9]\d|\d{3,})% of its peers' median`)))))
			}).Should(Succeed())
			warmed[fresh.UID] = true
			readers.start(ctx, fresh)
		}

		for _, p := range c.serving(ctx, mc, 3, memcachedA.Ref) {
			Expect(warmed).To(HaveKey(p.UID), "pod %s: one the spec warmed", p.Name)
		}
		eventually(ctx, func(g Gomega) []string {
			return c.memcachedEvents(ctx, mc)
		}).Should(HaveEach(MatchRegexp(`^Normal PodWarm: pod warm-\S+ is warm: it holds \d+ items`)))
		Expect(c.memcachedEvents(ctx, mc)).To(HaveLen(3), "a PodWarm event for each new pod")
		Expect(servers.fewest()).To(Equal(3), "fewest addresses of the Service during the rollout")
		// The last old pod leaves the list once it is deleted, a moment
		// after the Deployment counts it gone.
		eventually(ctx, servers.changes).Should(And(HaveLen(6), HaveEach(MatchRegexp(`^[-+]\S+$`))), "changes of the Service's addresses")
	}, SpecTimeout(5*time.Minute))
})

// fill stores n items in pod's memcached, as clients refill a cache.
func fill(ctx context.Context, pod corev1.Pod, n int) {
	GinkgoHelper()
	m, err := memcache.Dial(ctx, pod.Status.PodIP+":11211")
	Expect(err).NotTo(HaveOccurred(), "pod %s", pod.Name)
	defer func() { _ = m.Close() }()
	for i := range n {
		Expect(m.Set("item-"+strconv.Itoa(i), []byte("value"))).To(Succeed(), "pod %s", pod.Name)
	}
}

func containersReady(p *corev1.Pod) bool {
	return slices.ContainsFunc(p.Status.Conditions, func(c corev1.PodCondition) bool {
		return c.Type == corev1.ContainersReady && c.Status == corev1.ConditionTrue
	})
}

// reading has a client per pod read one of its items over and over, as a
// cache in use is read, until stop; a pod that stops (a rollout's old one)
// ends its reader.
type reading struct {
	wg     sync.WaitGroup
	cancel []context.CancelFunc
}

func (r *reading) start(ctx context.Context, pod corev1.Pod) {
	GinkgoHelper()
	ctx, cancel := context.WithCancel(ctx)
	r.cancel = append(r.cancel, cancel)
	m, err := memcache.Dial(ctx, pod.Status.PodIP+":11211")
	Expect(err).NotTo(HaveOccurred(), "pod %s", pod.Name)
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		defer func() { _ = m.Close() }()
		for ctx.Err() == nil {
			if _, err := m.Get("item-0"); err != nil {
				return
			}
		}
	}()
}

func (r *reading) stop() {
	for _, cancel := range r.cancel {
		cancel()
	}
	r.wg.Wait()
}
