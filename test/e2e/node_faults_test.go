package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
	"github.com/example-inc/memcached-operator/api/v1/gen"
	"github.com/example-inc/memcached-operator/hack/local-cluster/localcluster"
	"github.com/example-inc/memcached-operator/test/framework/harness"
	"github.com/example-inc/memcached-operator/test/framework/memcache"
	"github.com/example-inc/memcached-operator/test/framework/operatorproc"
	"github.com/example-inc/memcached-operator/test/framework/scrape"
)

// Faults of the real node itself, under one Memcached of size 3 that every
// spec shares: the node's container runtime and kubelet restarted, and the
// node drained. The memcached process killed in its pod is in
// node_memcached_test.go. Each spec records, as report entries, what the
// Memcached's status and Events said during and after.
var _ = Describe("faults of the real node", Ordered, Label(labelHost, labelNode, labelFaults, labelDisruptive), Serial, func() {
	const ns = "faults"
	var (
		c     *realCluster
		op    *operatorproc.Operator
		cache *cachev1.Memcached
	)

	BeforeAll(func(ctx SpecContext) {
		c = cluster
		op = c.operatorIn(ctx, "faults-operator", ns)
		cache = gen.Memcached(ns, "cache", gen.WithSize(3))
		Expect(c.k8s.Create(ctx, cache)).To(Succeed())
		c.serving(ctx, cache, 3, memcachedA.Ref)
	}, NodeTimeout(5*time.Minute))

	tailOnFailure(&op)

	// outlives stops (or kills) comp under the serving cache and starts it
	// again, and checks that nothing a client or the Memcached's status can
	// see changed: every pod answered on the connection it had before, all
	// through the outage and after it, with the items stored before; no pod
	// was replaced and no container restarted; no pod, endpoint or status
	// showed fewer than 3 ready; the node stayed Ready; the Memcached got
	// no Event. With hold, comp stays down until every pod has answered for
	// longer than a readiness period (5 s), so the kubelet probes and
	// relists at least once against the outage; without, it is started
	// again at once, as a supervisor restarts a crashed daemon.
	outlives := func(ctx context.Context, name string, comp localcluster.Component, down func(localcluster.Component) error, hold bool) (started time.Time) {
		GinkgoHelper()
		pods := c.serving(ctx, cache, 3, memcachedA.Ref)
		events := c.memcachedEvents(ctx, cache)
		askers := make([]*asker, len(pods))
		for i, p := range pods {
			askers[i] = startAsking(ctx, p)
		}
		w := c.watchFault(ctx, cache, pods)

		By(name)
		up := false
		DeferCleanup(func(ctx SpecContext) {
			// A spec that failed with comp down leaves the node as it
			// found it, for the specs after it.
			if !up {
				Expect(c.local.StartComponent(ctx, comp)).To(Succeed())
			}
		})
		start := time.Now()
		Expect(down(comp)).To(Succeed())
		answers := 3
		if hold {
			answers = int(6 * time.Second / askEvery)
		}
		before := make([]int, len(askers))
		for i, a := range askers {
			before[i] = a.answers()
		}
		eventually(ctx, func(g Gomega) {
			for i, a := range askers {
				g.Expect(a.answers()).To(BeNumerically(">=", before[i]+answers),
					"pod %s answers %d requests on its old connection while %s is down", a.pod.Name, answers, comp)
			}
		}).Should(Succeed())
		downFor := time.Since(start)
		started = time.Now()
		Expect(c.local.StartComponent(ctx, comp)).To(Succeed())
		up = true
		restarted := time.Since(start)

		// What the kubelet makes of the pods after the outage shows once it
		// has probed each again; the pod watch has seen it once it has
		// caught up with the pods as they are now.
		c.probedAgain(ctx, pods)
		eventually(ctx, func(g Gomega) {
			for _, p := range pods {
				now := &corev1.Pod{}
				g.Expect(c.k8s.Get(ctx, client.ObjectKeyFromObject(&p), now)).To(Succeed())
				g.Expect(w.podVersion(p.UID)).To(Equal(now.ResourceVersion), "pod %s as the watch last saw it", p.Name)
			}
		}).Should(Succeed())

		c.expectSamePods(ctx, cache, pods)
		for _, a := range askers {
			a.stop()
			Expect(a.failures()).To(BeEmpty(), "pod %s: requests on the connection opened before %s", a.pod.Name, name)
			a.readBack(ctx)
		}
		w.stop()
		AddReportEntry(name+": down for, and ready again after", fmt.Sprintf("%s, %s",
			downFor.Round(100*time.Millisecond), restarted.Round(100*time.Millisecond)))
		AddReportEntry(name+": longest wait for an answer on a connection opened before", slowestAnswer(askers).Round(time.Millisecond).String())
		w.report(name)
		Expect(w.pods.min()).To(Equal(3), "fewest ready pods during %s", name)
		Expect(w.servers.changes()).To(BeEmpty(), "changes of the Service's addresses during %s", name)
		Expect(w.status.unavailable()).To(BeEmpty(), "the Memcached's Available condition during %s", name)
		Expect(w.status.fewestReady()).To(BeEquivalentTo(3), "the Memcached's readyReplicas during %s", name)
		Expect(w.node.notReady()).To(BeEmpty(), "the node's Ready condition during %s", name)
		after := c.memcachedEvents(ctx, cache)
		AddReportEntry(name+": Events of the Memcached, after", strings.Join(after, "\n"))
		Expect(after).To(Equal(events), "Events of the Memcached during %s: none new", name)
		return started
	}

	It("keeps every memcached pod serving while containerd is stopped and started, then killed and started", func(ctx SpecContext) {
		outlives(ctx, "containerd stopped and started", localcluster.Containerd, c.local.StopComponent, true)
		outlives(ctx, "containerd killed (SIGKILL) and started", localcluster.Containerd, c.local.KillComponent, false)
	}, SpecTimeout(4*time.Minute))

	It("keeps every memcached pod serving while the kubelet is stopped and started, then killed and started; the node stays Ready", func(ctx SpecContext) {
		// A restarted kubelet takes a container for one it started itself,
		// unready until its first probe, unless the container started 10 s
		// before the kubelet did (kubeletRestartGracePeriod in its prober).
		// Seen here: a pod whose memcached had started about 10 s before
		// the kubelet's restart went unready for a moment, and the
		// Memcached with it. Long-running pods are what a kubelet restart
		// meets.
		eventually(ctx, func(g Gomega) {
			for _, p := range c.serving(ctx, cache, 3, memcachedA.Ref) {
				running := localcluster.ContainerStatus(&p, "memcached").State.Running
				g.Expect(running).NotTo(BeNil(), "pod %s's memcached is running", p.Name)
				started := running.StartedAt
				g.Expect(time.Since(started.Time)).To(BeNumerically(">", 12*time.Second), "pod %s's memcached has run for", p.Name)
			}
		}).Should(Succeed())
		for _, fault := range []struct {
			name string
			down func(localcluster.Component) error
			hold bool
		}{
			{"kubelet stopped and started", c.local.StopComponent, true},
			{"kubelet killed (SIGKILL) and started", c.local.KillComponent, false},
		} {
			started := outlives(ctx, fault.name, localcluster.Kubelet, fault.down, fault.hold)
			By("waiting for the new kubelet to renew the node's Lease")
			eventually(ctx, func(g Gomega) {
				lease, err := c.cs.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(ctx, localcluster.RealNodeName, metav1.GetOptions{})
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(lease.Spec.RenewTime).NotTo(BeNil())
				g.Expect(lease.Spec.RenewTime.After(started)).To(BeTrue(), "renewed at %s, kubelet started at %s", lease.Spec.RenewTime, started)
			}).Should(Succeed())
		}
	}, SpecTimeout(4*time.Minute))

	It("lets kubectl drain evict one pod at a time: the PDB refuses the second while the first has no place to run", func(ctx SpecContext) {
		pods := c.serving(ctx, cache, 3, memcachedA.Ref)
		events := c.memcachedEvents(ctx, cache)
		w := c.watchFault(ctx, cache, pods)
		askers := make([]*asker, len(pods))
		for i, p := range pods {
			askers[i] = startAsking(ctx, p)
		}
		eventually(ctx, w.pdb.seen).Should(BeTrue(), "the PDB watch saw the budget")
		Expect(w.pdb.fewest()).To(BeEquivalentTo(1), "disruptionsAllowed before the drain")
		DeferCleanup(func(ctx SpecContext) {
			// Whatever happened, the next spec finds the node schedulable.
			_, err := kubectl(ctx, nil, "uncordon", localcluster.RealNodeName)
			Expect(err).NotTo(HaveOccurred())
		})

		// On the only schedulable node, the first evicted pod's replacement
		// cannot be scheduled, so the budget stays spent and drain cannot
		// finish: its timeout is reached while every further eviction is
		// refused. That refusal is the proof; a second node would let drain
		// finish, and a kwok node would count a pod that serves nothing as
		// healthy.
		By("draining " + localcluster.RealNodeName)
		start := time.Now()
		out, err := kubectl(ctx, nil, "drain", localcluster.RealNodeName, "--ignore-daemonsets", "--delete-emptydir-data", "--timeout=12s")
		AddReportEntry("kubectl drain: exit and output", fmt.Sprintf("after %s: %v\n%s", time.Since(start).Round(100*time.Millisecond), err, out))
		Expect(err).To(MatchError(ContainSubstring("Cannot evict pod as it would violate the pod's disruption budget")),
			"drain reports the PDB refusing a second eviction")
		Expect(err).To(MatchError(ContainSubstring("global timeout reached: 12s")), "drain could not finish")

		By("reading what the cluster and the Memcached say with the node cordoned")
		eventually(ctx, func(g Gomega) {
			now, err := c.pods(ctx, cache)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(now).To(HaveLen(3), "two pods left and one replacement")
			var ready, pending int
			for _, p := range now {
				if harness.PodReady(&p) {
					ready++
					continue
				}
				g.Expect(p.Spec.NodeName).To(BeEmpty(), "pod %s is not scheduled", p.Name)
				g.Expect(p.Status.Conditions).To(ContainElement(And(HaveField("Type", corev1.PodScheduled),
					HaveField("Status", corev1.ConditionFalse), HaveField("Reason", corev1.PodReasonUnschedulable))), "pod %s", p.Name)
				pending++
			}
			g.Expect([]int{ready, pending}).To(Equal([]int{2, 1}), "ready and pending pods")
			pdb := &policyv1.PodDisruptionBudget{}
			g.Expect(c.k8s.Get(ctx, client.ObjectKeyFromObject(cache), pdb)).To(Succeed())
			g.Expect(pdb.Status.DisruptionsAllowed).To(BeZero())
			got := &cachev1.Memcached{}
			g.Expect(c.k8s.Get(ctx, client.ObjectKeyFromObject(cache), got)).To(Succeed())
			g.Expect(got.Status.ReadyReplicas).To(BeEquivalentTo(2))
			g.Expect(got.Status.Conditions).To(ContainElements(
				And(HaveField("Type", cachev1.ConditionAvailable), HaveField("Status", metav1.ConditionFalse),
					HaveField("Reason", cachev1.ReasonReplicasNotReady), HaveField("Message", "2 of 3 pods ready")),
				And(HaveField("Type", cachev1.ConditionDegraded), HaveField("Status", metav1.ConditionFalse))))
		}).Should(Succeed())
		cordoned := &cachev1.Memcached{}
		Expect(c.k8s.Get(ctx, client.ObjectKeyFromObject(cache), cordoned)).To(Succeed())
		AddReportEntry("drain: the Memcached's status with the node cordoned", conditionsText(cordoned.Status))
		p := w.evicted()
		Expect(p).NotTo(BeNil(), "the pod watch saw a pod with its eviction's DisruptionTarget condition")
		evicted := *p
		Expect(evicted.Status.Conditions).To(ContainElement(And(HaveField("Type", corev1.DisruptionTarget),
			HaveField("Reason", "EvictionByEvictionAPI"))), "the evicted pod says why")

		By("uncordoning: the replacement is scheduled and the Memcached is Available again")
		_, err = kubectl(ctx, nil, "uncordon", localcluster.RealNodeName)
		Expect(err).NotTo(HaveOccurred())
		now := c.serving(ctx, cache, 3, memcachedA.Ref)
		AddReportEntry("drain: from the drain to 3 pods serving after the uncordon", time.Since(start).Round(100*time.Millisecond).String())
		for _, p := range now {
			serves(ctx, p, 100)
		}
		for _, a := range askers {
			a.stop()
			if a.pod.UID == evicted.UID {
				Expect(a.failures()).NotTo(BeEmpty(), "the evicted pod's memcached stopped answering")
				continue
			}
			Expect(a.failures()).To(BeEmpty(), "pod %s, not evicted: requests on the connection opened before the drain", a.pod.Name)
			a.readBack(ctx)
			Expect(slices.ContainsFunc(now, func(p corev1.Pod) bool { return p.UID == a.pod.UID })).To(BeTrue(), "pod %s still runs", a.pod.Name)
		}
		w.stop()
		w.report("drain")
		Expect(w.mostDisrupted()).To(Equal(1), "most of the Memcached's pods terminating or unready at once")
		Expect(w.pods.min()).To(Equal(2), "fewest ready pods during the drain")
		Expect(w.servers.fewest()).To(Equal(2), "fewest addresses of the Service during the drain")
		Expect(w.pdb.fewest()).To(BeZero(), "the PDB's disruptionsAllowed once a pod was evicted")
		Expect(w.status.unavailable()).To(ConsistOf("2 of 3 pods ready"), "the Memcached's Available=False messages during the drain")
		after := c.memcachedEvents(ctx, cache)
		AddReportEntry("drain: Events of the Memcached, after", strings.Join(after, "\n"))
		Expect(after).To(Equal(events), "Events of the Memcached during the drain: none new")
	}, SpecTimeout(4*time.Minute))
})

// asker keeps asking one memcached, on a connection opened before a fault,
// for the items it stored there, and counts its answers and failures, so
// that a spec can tell whether the pod served all through the fault.
type asker struct {
	pod    corev1.Pod
	items  int
	client *memcache.Client
	cancel context.CancelFunc
	done   chan struct{}

	mu        sync.Mutex
	answered  int
	failed    []string
	last      time.Time
	slowestAt time.Duration
}

// askedItems is how many items an asker stores and asks for, one every
// askEvery.
const (
	askedItems = 100
	askEvery   = 20 * time.Millisecond
)

// startAsking opens a connection to pod's memcached, stores askedItems
// items in it and asks for them in turn, every askEvery, until stop.
func startAsking(ctx context.Context, pod corev1.Pod) *asker {
	GinkgoHelper()
	m, err := memcache.Dial(ctx, pod.Status.PodIP+":11211")
	Expect(err).NotTo(HaveOccurred(), "pod %s", pod.Name)
	a := &asker{pod: pod, items: askedItems, client: m, done: make(chan struct{}), last: time.Now()}
	for i := range a.items {
		Expect(m.Set(a.key(i), a.value(i))).To(Succeed(), "pod %s", pod.Name)
	}
	ctx, a.cancel = context.WithCancel(ctx)
	go func() {
		defer GinkgoRecover()
		defer close(a.done)
		tick := time.NewTicker(askEvery)
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			item := i % a.items
			got, err := m.Get(a.key(item))
			if err == nil && string(got) != string(a.value(item)) {
				err = fmt.Errorf("item %d is %q", item, got)
			}
			a.mu.Lock()
			if err != nil {
				if len(a.failed) < 5 {
					a.failed = append(a.failed, fmt.Sprintf("%s: %v", time.Now().Format(time.StampMilli), err))
				}
			} else {
				a.answered++
				a.slowestAt = max(a.slowestAt, time.Since(a.last))
				a.last = time.Now()
			}
			a.mu.Unlock()
		}
	}()
	DeferCleanup(a.stop)
	return a
}

func (a *asker) key(i int) string   { return fmt.Sprintf("fault-%d", i) }
func (a *asker) value(i int) []byte { return fmt.Appendf(nil, "%s-%d", a.pod.UID, i) }

func (a *asker) answers() int { a.mu.Lock(); defer a.mu.Unlock(); return a.answered }

func (a *asker) failures() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.failed)
}

// slowest is the longest time between two answers.
func (a *asker) slowest() time.Duration { a.mu.Lock(); defer a.mu.Unlock(); return a.slowestAt }

// stop ends the asking and closes the connection; it may be called again.
func (a *asker) stop() {
	a.cancel()
	<-a.done
	_ = a.client.Close()
}

// readBack reads every item on a new connection: the pod still holds what
// was stored before the fault, and takes new connections after it.
func (a *asker) readBack(ctx context.Context) {
	GinkgoHelper()
	m, err := memcache.Dial(ctx, a.pod.Status.PodIP+":11211")
	Expect(err).NotTo(HaveOccurred(), "pod %s: a new connection", a.pod.Name)
	defer func() { _ = m.Close() }()
	for i := range a.items {
		Expect(m.Get(a.key(i))).To(Equal(a.value(i)), "pod %s: item %d, stored before", a.pod.Name, i)
	}
}

func slowestAnswer(askers []*asker) time.Duration {
	var d time.Duration
	for _, a := range askers {
		d = max(d, a.slowest())
	}
	return d
}

// faultWatch follows, from watches, what a fault looks like from outside:
// the ready pods and the Service's addresses of a Memcached, how many of the pods it had
// before were disrupted at once, its status, its PDB and the node.
type faultWatch struct {
	start   time.Time
	cancel  context.CancelFunc
	pods    *lowest
	servers *serverList
	status  *statusLog
	pdb     *pdbLog
	node    *nodeLog

	mu       sync.Mutex
	versions map[types.UID]string
	original map[types.UID]bool
	// disrupted holds the original pods seen deleted, terminating or not
	// ready, as they were last seen.
	disrupted map[types.UID]*corev1.Pod
	most      int
}

// watchFault starts watching mc, whose serving pods are pods.
func (c *realCluster) watchFault(ctx context.Context, mc *cachev1.Memcached, pods []corev1.Pod) *faultWatch {
	GinkgoHelper()
	ctx, cancel := context.WithCancel(ctx)
	w := &faultWatch{start: time.Now(), cancel: cancel, pods: &lowest{want: len(pods)},
		versions: map[types.UID]string{}, original: map[types.UID]bool{}, disrupted: map[types.UID]*corev1.Pod{}}
	w.pdb = &pdbLog{changeLog: changeLog{start: w.start}}
	w.node = &nodeLog{changeLog: changeLog{start: w.start}}
	for _, p := range pods {
		w.original[p.UID] = true
	}
	DeferCleanup(cancel)
	c.watchReadyPods(ctx, mc, w.pods)
	w.servers = c.watchServerList(ctx, mc, len(pods))
	c.watchEach(ctx, &corev1.PodList{}, func(ev watch.Event) {
		if p, ok := ev.Object.(*corev1.Pod); ok {
			w.sawPod(ev.Type, p)
		}
	}, client.InNamespace(mc.Namespace), podsOf(mc))
	w.status = c.watchStatus(ctx, mc)
	c.watchEach(ctx, &policyv1.PodDisruptionBudgetList{}, func(ev watch.Event) {
		if got, ok := ev.Object.(*policyv1.PodDisruptionBudget); ok && got.Name == mc.Name && ev.Type != watch.Deleted {
			w.pdb.see(got.Status)
		}
	}, client.InNamespace(mc.Namespace))
	c.watchEach(ctx, &corev1.NodeList{}, func(ev watch.Event) {
		if n, ok := ev.Object.(*corev1.Node); ok && n.Name == localcluster.RealNodeName {
			w.node.see(n)
		}
	})
	eventually(ctx, w.pods.seen).Should(BeTrue(), "the pod watch saw the %d pods", len(pods))
	eventually(ctx, w.status.seen).Should(BeTrue(), "the Memcached watch saw its status")
	eventually(ctx, w.node.seen).Should(BeTrue(), "the node watch saw the node")
	return w
}

// watchEach calls f with every event of a watch of list, from a goroutine,
// until ctx ends.
func (c *realCluster) watchEach(ctx context.Context, list client.ObjectList, f func(watch.Event), opts ...client.ListOption) {
	GinkgoHelper()
	w, err := c.k8s.Watch(ctx, list, opts...)
	Expect(err).NotTo(HaveOccurred())
	go func() {
		defer GinkgoRecover()
		defer w.Stop()
		for ev := range w.ResultChan() {
			if ev.Type != watch.Error {
				f(ev)
			}
		}
	}()
}

func (w *faultWatch) sawPod(t watch.EventType, p *corev1.Pod) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.versions[p.UID] = p.ResourceVersion
	if !w.original[p.UID] {
		return
	}
	if t == watch.Deleted || p.DeletionTimestamp != nil || !harness.PodReady(p) {
		w.disrupted[p.UID] = p.DeepCopy()
	} else {
		delete(w.disrupted, p.UID)
	}
	w.most = max(w.most, len(w.disrupted))
}

// podVersion is the resourceVersion of the pod the watch saw last.
func (w *faultWatch) podVersion(uid types.UID) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.versions[uid]
}

// mostDisrupted is the most pods of those serving before that were at once
// deleted, terminating or not ready. A pod once gone stays counted.
func (w *faultWatch) mostDisrupted() int { w.mu.Lock(); defer w.mu.Unlock(); return w.most }

// evicted is an original pod seen with its eviction's DisruptionTarget
// condition, as last seen; nil if none was.
func (w *faultWatch) evicted() *corev1.Pod {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, p := range w.disrupted {
		if slices.ContainsFunc(p.Status.Conditions, func(c corev1.PodCondition) bool { return c.Type == corev1.DisruptionTarget }) {
			return p
		}
	}
	return nil
}

func (w *faultWatch) stop() { w.cancel() }

// report adds what the watches saw as report entries.
func (w *faultWatch) report(name string) {
	AddReportEntry(name+": fewest ready pods, addresses of the Service, most pods disrupted at once",
		fmt.Sprintf("%d pods, %d addresses, %d disrupted", w.pods.min(), w.servers.fewest(), w.mostDisrupted()))
	AddReportEntry(name+": the Memcached's status, as it changed (s since the fault)", w.status.text())
	AddReportEntry(name+": the PDB's status, as it changed", w.pdb.text())
	AddReportEntry(name+": the node, as it changed", w.node.text())
}

// changeLog holds the distinct states a watch saw, each with when it was
// first seen.
type changeLog struct {
	start time.Time
	mu    sync.Mutex
	lines []string
	last  string
}

func (l *changeLog) add(state string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if state == l.last {
		return
	}
	l.last = state
	l.lines = append(l.lines, fmt.Sprintf("%+6.1fs %s", time.Since(l.start).Seconds(), state))
}

func (l *changeLog) seen() bool { l.mu.Lock(); defer l.mu.Unlock(); return len(l.lines) > 0 }

func (l *changeLog) text() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

// statusLog records a Memcached's status: its conditions as they changed,
// the fewest ready replicas, and every message of Available=False.
type statusLog struct {
	changeLog
	readySeen    bool
	ready        int32
	unavailables []string
}

func (l *statusLog) see(st cachev1.MemcachedStatus) {
	l.add(conditionsText(st))
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.readySeen || st.ReadyReplicas < l.ready {
		l.ready, l.readySeen = st.ReadyReplicas, true
	}
	if c := meta.FindStatusCondition(st.Conditions, cachev1.ConditionAvailable); c != nil && c.Status != metav1.ConditionTrue &&
		!slices.Contains(l.unavailables, c.Message) {
		l.unavailables = append(l.unavailables, c.Message)
	}
}

// watchStatus records mc's status from now until ctx ends.
func (c *realCluster) watchStatus(ctx context.Context, mc *cachev1.Memcached) *statusLog {
	GinkgoHelper()
	l := &statusLog{changeLog: changeLog{start: time.Now()}}
	c.watchEach(ctx, &cachev1.MemcachedList{}, func(ev watch.Event) {
		if got, ok := ev.Object.(*cachev1.Memcached); ok && got.Name == mc.Name {
			l.see(got.Status)
		}
	}, client.InNamespace(mc.Namespace))
	return l
}

func (l *statusLog) fewestReady() int32 { l.mu.Lock(); defer l.mu.Unlock(); return l.ready }

// unavailable are the messages Available had while it was not True.
func (l *statusLog) unavailable() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.unavailables)
}

// conditionsText is a status in one line: readyReplicas and each
// condition's status, reason and message.
func conditionsText(st cachev1.MemcachedStatus) string {
	parts := []string{fmt.Sprintf("readyReplicas=%d", st.ReadyReplicas)}
	for _, c := range st.Conditions {
		parts = append(parts, fmt.Sprintf("%s=%s %s %q", c.Type, c.Status, c.Reason, c.Message))
	}
	return strings.Join(parts, "; ")
}

// pdbLog records a PodDisruptionBudget's status and the fewest disruptions
// it allowed.
type pdbLog struct {
	changeLog
	allowed int32
}

func (l *pdbLog) see(st policyv1.PodDisruptionBudgetStatus) {
	if st.ObservedGeneration == 0 {
		return // not computed yet
	}
	first := !l.seen()
	l.add(fmt.Sprintf("disruptionsAllowed=%d currentHealthy=%d desiredHealthy=%d expectedPods=%d",
		st.DisruptionsAllowed, st.CurrentHealthy, st.DesiredHealthy, st.ExpectedPods))
	l.mu.Lock()
	defer l.mu.Unlock()
	if first || st.DisruptionsAllowed < l.allowed {
		l.allowed = st.DisruptionsAllowed
	}
}

func (l *pdbLog) fewest() int32 { l.mu.Lock(); defer l.mu.Unlock(); return l.allowed }

// nodeLog records the node's Ready condition and whether it is cordoned,
// and every reason Ready was not True.
type nodeLog struct {
	changeLog
	notReadyReasons []string
}

func (l *nodeLog) see(n *corev1.Node) {
	state := fmt.Sprintf("unschedulable=%t", n.Spec.Unschedulable)
	for _, c := range n.Status.Conditions {
		if c.Type != corev1.NodeReady {
			continue
		}
		state += fmt.Sprintf(" Ready=%s %s %q", c.Status, c.Reason, c.Message)
		if c.Status != corev1.ConditionTrue {
			l.mu.Lock()
			l.notReadyReasons = append(l.notReadyReasons, c.Reason+": "+c.Message)
			l.mu.Unlock()
		}
	}
	l.add(state)
}

func (l *nodeLog) notReady() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.notReadyReasons)
}

// memcachedEvents are the Events about mc, each as type, reason, note and
// count, sorted: two lists are equal when no Event was added or repeated.
func (c *realCluster) memcachedEvents(ctx context.Context, mc *cachev1.Memcached) []string {
	GinkgoHelper()
	list, err := c.cs.CoreV1().Events(mc.Namespace).List(ctx, metav1.ListOptions{
		FieldSelector: "involvedObject.kind=Memcached,involvedObject.name=" + mc.Name})
	Expect(err).NotTo(HaveOccurred())
	var out []string
	for _, e := range list.Items {
		count := e.Count
		if e.Series != nil {
			count = e.Series.Count
		}
		out = append(out, fmt.Sprintf("%s %s: %s (x%d)", e.Type, e.Reason, e.Message, count))
	}
	slices.Sort(out)
	return out
}

// probedAgain waits until the kubelet has run the readiness probe of each
// of pods since the call: the kubelet's own count of probes (its
// /metrics/probes, through the API server's node proxy) moves past what
// it was. A restarted kubelet counts from zero again.
func (c *realCluster) probedAgain(ctx context.Context, pods []corev1.Pod) {
	GinkgoHelper()
	probes := func(g Gomega, p corev1.Pod) float64 {
		text, err := c.cs.CoreV1().RESTClient().Get().
			AbsPath("/api/v1/nodes", localcluster.RealNodeName, "proxy/metrics/probes").DoRaw(ctx)
		g.Expect(err).NotTo(HaveOccurred())
		m, err := scrape.Parse(string(text))
		g.Expect(err).NotTo(HaveOccurred())
		return m.Sum("prober_probe_total", map[string]string{"probe_type": "Readiness", "pod_uid": string(p.UID)})
	}
	before := map[types.UID]float64{}
	eventually(ctx, func(g Gomega) {
		for _, p := range pods {
			before[p.UID] = probes(g, p)
		}
	}).Should(Succeed())
	eventually(ctx, func(g Gomega) {
		for _, p := range pods {
			g.Expect(probes(g, p)).To(BeNumerically(">", before[p.UID]), "readiness probes of pod %s", p.Name)
		}
	}).Should(Succeed())
}
