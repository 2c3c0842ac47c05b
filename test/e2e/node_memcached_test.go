package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	ggcrname "github.com/google/go-containerregistry/pkg/name"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
	"github.com/example-inc/memcached-operator/api/v1/gen"
	"github.com/example-inc/memcached-operator/controllers"
	"github.com/example-inc/memcached-operator/hack/local-cluster/images"
	"github.com/example-inc/memcached-operator/hack/local-cluster/localcluster"
	"github.com/example-inc/memcached-operator/hack/local-cluster/memcachedproc"
	"github.com/example-inc/memcached-operator/test/framework/harness"
	"github.com/example-inc/memcached-operator/test/framework/memcache"
	"github.com/example-inc/memcached-operator/test/framework/operatorproc"
)

// proxyVariables are what the operator copies into every memcached
// container, and nothing else of its environment.
var proxyVariables = []string{"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy"}

var _ = Describe("memcached on the real node", Ordered, Label(labelHost, labelNode), func() {
	const ns = "cache"
	var (
		c        *realCluster
		op       *operatorproc.Operator
		cache    *cachev1.Memcached
		sessions *cachev1.Memcached
	)

	// startOperator runs the operator on the host, watching ns, with its
	// webhooks in local mode, the given image and environment; the one
	// running is stopped first.
	startOperator := func(ctx context.Context, image string, env ...string) {
		GinkgoHelper()
		Expect(op.Stop(30 * time.Second)).To(Succeed())
		var err error
		op, err = c.startOperator(ctx, "memcached-operator", ns, append([]string{"RELATED_IMAGE_MEMCACHED=" + image}, env...)...)
		Expect(err).NotTo(HaveOccurred())
	}

	BeforeAll(func(ctx SpecContext) {
		c = cluster
		c.restrictedNamespace(ctx, ns)
		startOperator(ctx, memcachedA.Ref)
		DeferCleanup(func() error { return op.Stop(30 * time.Second) })
	}, NodeTimeout(5*time.Minute))

	tailOnFailure(&op)

	It("runs a Memcached of size 3 as three serving memcached pods with 64 MiB for items", func(ctx SpecContext) {
		cache = gen.Memcached(ns, "cache", gen.WithSize(3))
		start := time.Now()
		Expect(c.k8s.Create(ctx, cache)).To(Succeed())
		pods := c.serving(ctx, cache, 3, memcachedA.Ref)
		AddReportEntry("size 3 serving", time.Since(start).Round(time.Millisecond).String())
		shipped := ggcrname.MustParseReference(controllers.DefaultMemcachedImage).Identifier()
		for _, p := range pods {
			settings := serves(ctx, p, 1000)
			Expect(settings).To(HaveKeyWithValue("maxbytes", "67108864"), "pod %s", p.Name)
			Expect(settings).To(HaveKeyWithValue("tcpport", "11211"), "pod %s", p.Name)
			Expect(releaseOf(ctx, p)).To(Equal(shipped), "pod %s: the release of the default image, %s", p.Name, controllers.DefaultMemcachedImage)
		}
	}, SpecTimeout(3*time.Minute))

	It("runs memcached as the restricted profile asks: UID 11211, no capabilities, no new privileges, seccomp, read-only root", func(ctx SpecContext) {
		pods, err := c.pods(ctx, cache)
		Expect(err).NotTo(HaveOccurred())
		for _, p := range pods {
			pid := c.memcachedPID(ctx, p)
			status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
			Expect(err).NotTo(HaveOccurred())
			fields := map[string]string{}
			for _, l := range strings.Split(string(status), "\n") {
				if k, v, ok := strings.Cut(l, ":"); ok {
					fields[k] = strings.Join(strings.Fields(v), " ")
				}
			}
			uid := fmt.Sprint(images.MemcachedUID)
			Expect(fields).To(HaveKeyWithValue("Uid", strings.Repeat(uid+" ", 3)+uid), "pod %s", p.Name)
			Expect(fields).To(HaveKeyWithValue("Gid", strings.Repeat(uid+" ", 3)+uid), "pod %s", p.Name)
			for _, set := range []string{"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"} {
				Expect(fields).To(HaveKeyWithValue(set, "0000000000000000"), "pod %s %s", p.Name, set)
			}
			Expect(fields).To(HaveKeyWithValue("NoNewPrivs", "1"), "pod %s", p.Name)
			Expect(fields).To(HaveKeyWithValue("Seccomp", "2"), "pod %s: seccomp filter mode (RuntimeDefault)", p.Name)
			Expect(rootMountOptions(pid)).To(ContainElement("ro"), "pod %s: root file system", p.Name)
		}
	})

	It("restarts a crashing memcached; while it is down readyReplicas drops and clients' server list keeps its address", func(ctx SpecContext) {
		pods, err := c.pods(ctx, cache)
		Expect(err).NotTo(HaveOccurred())
		victim := pods[0]
		restarts := localcluster.ContainerStatus(&victim, "memcached").RestartCount
		restarted := func(n int32) func(Gomega) {
			return func(g Gomega) {
				p := &corev1.Pod{}
				g.Expect(c.k8s.Get(ctx, client.ObjectKeyFromObject(&victim), p)).To(Succeed())
				g.Expect(localcluster.ContainerStatus(p, "memcached").RestartCount).To(Equal(n))
				g.Expect(localcluster.ContainerStatus(p, "memcached").State.Running).NotTo(BeNil())
			}
		}

		servers := c.watchServerList(ctx, cache, 3)
		status := c.watchStatus(ctx, cache)

		// The first crash is restarted at once, often before anyone sees
		// it; the second waits out kubelet's back-off (10 s), which is
		// what a crash-looping memcached looks like from outside.
		By("killing memcached in " + victim.Name + " twice with SIGKILL, as the OOM killer would")
		Expect(syscall.Kill(c.memcachedPID(ctx, victim), syscall.SIGKILL)).To(Succeed())
		eventually(ctx, restarted(restarts+1)).Should(Succeed())
		p := &corev1.Pod{}
		Expect(c.k8s.Get(ctx, client.ObjectKeyFromObject(&victim), p)).To(Succeed())
		Expect(syscall.Kill(c.memcachedPID(ctx, *p), syscall.SIGKILL)).To(Succeed())
		eventually(ctx, status.fewestReady).Should(BeNumerically("<", 3), "status.readyReplicas dropped while memcached was down")

		By("waiting for kubelet to bring it back")
		eventually(ctx, restarted(restarts+2)).Should(Succeed())
		pods = c.serving(ctx, cache, 3, memcachedA.Ref)
		Expect(pods[0].Name).To(Equal(victim.Name), "the same pod, its container restarted")
		serves(ctx, pods[0], 100)
		Expect(servers.last()).To(ContainElement(victim.Status.PodIP), "the Service's addresses")
		Expect(servers.changes()).To(BeEmpty(), "changes of the Service's addresses while memcached was down and back")
	}, SpecTimeout(3*time.Minute))

	It("keeps status.nodes equal to the running pods while scaling 3 -> 5 -> 1", func(ctx SpecContext) {
		for _, size := range []int32{5, 1} {
			patch := client.MergeFrom(cache.DeepCopy())
			cache.Spec.Size = ptr.To(size)
			Expect(c.k8s.Patch(ctx, cache, patch)).To(Succeed())
			pods := c.serving(ctx, cache, int(size), memcachedA.Ref)
			for _, p := range pods {
				serves(ctx, p, 100)
			}
		}
	}, SpecTimeout(3*time.Minute))

	It("stores and returns a 3 MiB item with maxItemSize 4Mi, memory 256Mi and 256 threads (the most admitted), which memcached at the defaults refuses", func(ctx SpecContext) {
		value := make([]byte, 3*1024*1024)
		_, _ = rand.Read(value)

		// Size 1 and 256 threads are admitted with warnings, which is all
		// they cost here. The threads ride on this Memcached rather than on
		// one of their own, which would cost another pod start.
		large := gen.Memcached(ns, "large-items", gen.WithSize(1), gen.WithMemory("256Mi"), gen.WithMaxItemSize("4Mi"),
			gen.WithThreads(256), gen.WithMaxConnections(1296))
		Expect(c.k8s.Create(ctx, large)).To(Succeed())
		DeferCleanup(c.deleteMemcached, large, NodeTimeout(3*time.Minute))
		// The suite's cache runs at the defaults; when it does not run (a
		// focused run) a Memcached of its own stands in for it.
		defaults := cache
		if defaults == nil {
			defaults = gen.Memcached(ns, "default-items", gen.WithSize(1))
			Expect(c.k8s.Create(ctx, defaults)).To(Succeed())
			DeferCleanup(c.deleteMemcached, defaults, NodeTimeout(3*time.Minute))
		}

		pod := c.serving(ctx, large, 1, memcachedA.Ref)[0]
		By("storing and reading back 3 MiB of random bytes in " + pod.Name)
		m, err := memcache.Dial(ctx, pod.Status.PodIP+":11211")
		Expect(err).NotTo(HaveOccurred())
		defer func() { _ = m.Close() }()
		Expect(m.SetReply("large", value)).To(Equal("STORED"), "pod %s: set of a 3 MiB item, with maxItemSize 4Mi", pod.Name)
		got, err := m.Get("large")
		Expect(err).NotTo(HaveOccurred(), "pod %s", pod.Name)
		Expect(got).To(HaveLen(len(value)), "pod %s", pod.Name)
		Expect(bytes.Equal(got, value)).To(BeTrue(), "pod %s: the 3 MiB read back are the ones stored", pod.Name)
		settings, err := m.StatsSettings()
		Expect(err).NotTo(HaveOccurred())
		Expect(settings).To(HaveKeyWithValue("item_size_max", "4194304"), "pod %s", pod.Name)
		Expect(settings).To(HaveKeyWithValue("maxbytes", "268435456"), "pod %s", pod.Name)
		Expect(settings).To(HaveKeyWithValue("num_threads", "256"), "pod %s", pod.Name)
		Expect(settings).To(HaveKeyWithValue("maxconns", "1296"), "pod %s", pod.Name)
		Expect(pod.Spec.Containers[0].Command).To(Equal([]string{"memcached", "--port=11211", "--memory-limit=256",
			"--extended=modern", "--verbose", "--max-item-size=4194304", "--conn-limit=1296", "--threads=256"}), "pod %s", pod.Name)

		size := int(ptr.Deref(defaults.Spec.Size, 0))
		for _, p := range c.serving(ctx, defaults, size, memcachedA.Ref) {
			By("offering the same item to " + p.Name + ", at the defaults")
			m, err := memcache.Dial(ctx, p.Status.PodIP+":11211")
			Expect(err).NotTo(HaveOccurred())
			DeferCleanup(func() { _ = m.Close() })
			Expect(m.SetReply("large", value)).To(Equal("SERVER_ERROR object too large for cache"), "pod %s, at the default 1 MiB item size", p.Name)
			Expect(m.Get("large")).Error().To(MatchError(memcache.ErrNotFound), "pod %s: the refused item is not stored, and the connection still answers", p.Name)
			Expect(m.StatsSettings()).To(HaveKeyWithValue("item_size_max", "1048576"), "pod %s", p.Name)
		}
	}, SpecTimeout(4*time.Minute))

	It("puts the proxy into every memcached process, changes it and takes it out again, one rollout each", func(ctx SpecContext) {
		sessions = gen.Memcached(ns, "sessions", gen.WithSize(2))
		Expect(c.k8s.Create(ctx, sessions)).To(Succeed())
		c.serving(ctx, sessions, 2, memcachedA.Ref)
		c.serving(ctx, cache, 1, memcachedA.Ref)

		password := fmt.Sprintf("pw%d", time.Now().UnixNano())
		proxy := []string{
			"HTTP_PROXY=http://proxyuser:" + password + "@proxy.internal.invalid:3128",
			"HTTPS_PROXY=http://proxyuser:" + password + "@proxy.internal.invalid:3129",
			"NO_PROXY=.cluster.local,.svc,10.0.0.0/8",
		}
		want := map[string]string{}
		for _, kv := range proxy {
			k, v, _ := strings.Cut(kv, "=")
			want[k], want[strings.ToLower(k)] = v, v
		}

		By("restarting the operator with the proxy set")
		rollouts := c.rollouts(ctx, cache, sessions)
		startOperator(ctx, memcachedA.Ref, proxy...)
		c.expectEnvironments(ctx, func(g Gomega, env map[string]string) {
			for k, v := range want {
				g.Expect(env).To(HaveKeyWithValue(k, v))
			}
		}, cache, sessions)
		c.expectOneRolloutEach(ctx, rollouts)

		By("restarting it with the same proxy: nothing changes")
		rollouts = c.rollouts(ctx, cache, sessions)
		startOperator(ctx, memcachedA.Ref, proxy...)
		eventually(ctx, op.Reconciles).Should(BeNumerically(">=", 2), "the new operator reconciled both")
		Expect(c.rollouts(ctx, cache, sessions)).To(Equal(rollouts), "no write of either Deployment's spec")

		By("restarting it with another proxy and HTTPS_PROXY unset")
		rollouts = c.rollouts(ctx, cache, sessions)
		startOperator(ctx, memcachedA.Ref, "HTTP_PROXY=http://proxy-b.internal.invalid:3128", "NO_PROXY=.svc")
		c.expectEnvironments(ctx, func(g Gomega, env map[string]string) {
			g.Expect(env).To(HaveKeyWithValue("http_proxy", "http://proxy-b.internal.invalid:3128"))
			g.Expect(env).To(HaveKeyWithValue("NO_PROXY", ".svc"))
			g.Expect(env).NotTo(HaveKey("HTTPS_PROXY"))
			g.Expect(env).NotTo(HaveKey("https_proxy"))
		}, cache, sessions)
		c.expectOneRolloutEach(ctx, rollouts)

		By("restarting it without the proxy")
		rollouts = c.rollouts(ctx, cache, sessions)
		startOperator(ctx, memcachedA.Ref)
		c.expectEnvironments(ctx, func(g Gomega, env map[string]string) {
			for _, k := range proxyVariables {
				g.Expect(env).NotTo(HaveKey(k))
			}
		}, cache, sessions)
		c.expectOneRolloutEach(ctx, rollouts)
		Expect(os.ReadFile(op.LogPath())).NotTo(ContainSubstring(password), "the proxy password in the operator's log")
	}, SpecTimeout(6*time.Minute))

	It("rolls every Memcached once onto the image RELATED_IMAGE_MEMCACHED names, one pod at a time: the oldest release supported, serving", func(ctx SpecContext) {
		wide := gen.Memcached(ns, "wide", gen.WithSize(6))
		Expect(c.k8s.Create(ctx, wide)).To(Succeed())
		c.serving(ctx, wide, 6, memcachedA.Ref)
		readyPods, servers := c.watchServing(ctx, wide, 6)

		rollouts := c.rollouts(ctx, cache, sessions, wide)
		start := time.Now()
		startOperator(ctx, memcachedB.Ref)
		for _, mc := range []*cachev1.Memcached{wide, cache, sessions} {
			for _, p := range c.serving(ctx, mc, int(ptr.Deref(mc.Spec.Size, 0)), memcachedB.Ref) {
				Expect(localcluster.ContainerStatus(&p, "memcached").Image).To(Equal(memcachedB.Ref))
				serves(ctx, p, 100)
				Expect(releaseOf(ctx, p)).To(Equal(memcachedproc.OldestVersion), "pod %s", p.Name)
			}
			if mc == wide {
				AddReportEntry("rollout of a Memcached of size 6, from the operator's restart to 6 new pods serving",
					time.Since(start).Round(100*time.Millisecond).String())
			}
		}
		c.expectOneRolloutEach(ctx, rollouts)
		// A pod is ready before an old one stops: Kubernetes' default
		// strategy stops one of six at once. Clients' server list gains
		// each new pod and loses each old one, one at a time: no other
		// server comes or goes.
		Expect(readyPods.min()).To(Equal(6), "fewest ready pods of the size-6 Memcached during its rollout")
		Expect(servers.fewest()).To(Equal(6), "fewest addresses of its Service during its rollout")
		// The last old pod leaves the list once it is deleted, a moment
		// after the Deployment counts it gone.
		eventually(ctx, servers.changes).Should(HaveLen(12), "6 pods added and 6 removed")
		Expect(servers.changes()).To(HaveEach(MatchRegexp(`^[-+]\S+$`)), "each change of the Service's addresses adds or removes one")
		AddReportEntry("fewest ready pods, and addresses of its Service, of the size-6 Memcached during its rollout",
			fmt.Sprintf("%d pods, %d addresses", readyPods.min(), servers.fewest()))
	}, SpecTimeout(6*time.Minute))
})

// expectEnvironments waits until the environment of every memcached
// process of mcs, on the pods serving now, passes check.
func (c *realCluster) expectEnvironments(ctx context.Context, check func(Gomega, map[string]string), mcs ...*cachev1.Memcached) {
	GinkgoHelper()
	for _, mc := range mcs {
		eventually(ctx, func(g Gomega) {
			for _, p := range c.serving(ctx, mc, int(ptr.Deref(mc.Spec.Size, 0)), memcachedA.Ref) {
				check(g, environ(c.memcachedPID(ctx, p)))
			}
		}).Should(Succeed())
	}
}

// deleteMemcached deletes mc, its dependents first, and waits until it and
// every pod of it are gone, terminating ones too: the next spec finds the
// node and the operator as they were before mc.
func (c *realCluster) deleteMemcached(ctx context.Context, mc *cachev1.Memcached) {
	GinkgoHelper()
	err := c.k8s.Delete(ctx, mc, client.PropagationPolicy(metav1.DeletePropagationForeground))
	Expect(client.IgnoreNotFound(err)).To(Succeed())
	eventually(ctx, func(g Gomega) {
		err := c.k8s.Get(ctx, client.ObjectKeyFromObject(mc), &cachev1.Memcached{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "Memcached %s gone (%v)", mc.Name, err)
		var pods corev1.PodList
		g.Expect(c.k8s.List(ctx, &pods, client.InNamespace(mc.Namespace), podsOf(mc))).To(Succeed())
		g.Expect(pods.Items).To(BeEmpty(), "pods of %s", mc.Name)
	}).Should(Succeed())
}

// rootMountOptions are the mount options of a process's root file system.
func rootMountOptions(pid int) []string {
	GinkgoHelper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/mountinfo", pid))
	Expect(err).NotTo(HaveOccurred())
	for _, l := range strings.Split(string(data), "\n") {
		f := strings.Fields(l)
		if len(f) > 5 && f[4] == "/" {
			return strings.Split(f[5], ",")
		}
	}
	Fail(fmt.Sprintf("no root mount in /proc/%d/mountinfo", pid))
	return nil
}

// rollout is where a Memcached's Deployment stands: its generation, which
// any write of its spec moves, and its revision, which the Deployment
// controller counts up once per rollout (also when a rollout returns to an
// earlier pod template and so reuses its ReplicaSet).
type rollout struct {
	generation int64
	revision   int
}

// rollouts are the Deployments' rollouts, by Memcached name.
func (c *realCluster) rollouts(ctx context.Context, mcs ...*cachev1.Memcached) map[string]rollout {
	GinkgoHelper()
	out := map[string]rollout{}
	for _, mc := range mcs {
		d := &appsv1.Deployment{}
		Expect(c.k8s.Get(ctx, client.ObjectKeyFromObject(mc), d)).To(Succeed())
		rev, err := strconv.Atoi(d.Annotations["deployment.kubernetes.io/revision"])
		Expect(err).NotTo(HaveOccurred(), "Deployment %s revision", d.Name)
		out[mc.Name] = rollout{generation: d.Generation, revision: rev}
	}
	return out
}

// expectOneRolloutEach checks that each Deployment has rolled out exactly
// once since before, and finished.
func (c *realCluster) expectOneRolloutEach(ctx context.Context, before map[string]rollout) {
	GinkgoHelper()
	var mcs []*cachev1.Memcached
	for name := range before {
		mcs = append(mcs, gen.Memcached("cache", name))
	}
	eventually(ctx, func(g Gomega) {
		for _, mc := range mcs {
			d := &appsv1.Deployment{}
			g.Expect(c.k8s.Get(ctx, client.ObjectKeyFromObject(mc), d)).To(Succeed())
			g.Expect(d.Status.ObservedGeneration).To(Equal(d.Generation))
			g.Expect(d.Status.UpdatedReplicas).To(Equal(ptr.Deref(d.Spec.Replicas, 0)))
			g.Expect(d.Status.Replicas).To(Equal(ptr.Deref(d.Spec.Replicas, 0)))
		}
	}).Should(Succeed())
	for name, now := range c.rollouts(ctx, mcs...) {
		Expect(now.revision).To(Equal(before[name].revision+1), "rollouts of %s", name)
	}
}

// lowest is the fewest ready things a watch counted, from the moment it
// first counted want: until then the watch is still listing what exists.
type lowest struct {
	mu     sync.Mutex
	want   int
	primed bool
	fewest int
}

func (l *lowest) see(n int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case !l.primed && n >= l.want:
		l.primed, l.fewest = true, n
	case l.primed && n < l.fewest:
		l.fewest = n
	}
}

func (l *lowest) seen() bool { l.mu.Lock(); defer l.mu.Unlock(); return l.primed }
func (l *lowest) min() int   { l.mu.Lock(); defer l.mu.Unlock(); return l.fewest }

// watchReadyPods counts, at each change, the pods of mc that are ready and
// not being deleted.
func (c *realCluster) watchReadyPods(ctx context.Context, mc *cachev1.Memcached, l *lowest) {
	GinkgoHelper()
	ready := map[string]bool{}
	c.watchEach(ctx, &corev1.PodList{}, func(ev watch.Event) {
		p, ok := ev.Object.(*corev1.Pod)
		if !ok {
			return
		}
		if ev.Type != watch.Deleted && p.DeletionTimestamp == nil && harness.PodReady(p) {
			ready[p.Name] = true
		} else {
			delete(ready, p.Name)
		}
		l.see(len(ready))
	}, client.InNamespace(mc.Namespace), podsOf(mc))
}

// watchServing counts mc's ready pods from the first count of n on
// (watchReadyPods) and records its server list (watchServerList) until ctx
// ends: a spec's context ends with the spec.
func (c *realCluster) watchServing(ctx context.Context, mc *cachev1.Memcached, n int) (*lowest, *serverList) {
	GinkgoHelper()
	ready := &lowest{want: n}
	c.watchReadyPods(ctx, mc, ready)
	servers := c.watchServerList(ctx, mc, n)
	eventually(ctx, ready.seen).Should(BeTrue(), "the pod watch saw the %d pods", n)
	return ready, servers
}

// serverList is every list of addresses a Memcached's headless Service
// published, in order: what its clients discover, CoreDNS answering the
// Service's name with its EndpointSlices' ready addresses.
type serverList struct {
	mu    sync.Mutex
	want  int
	lists [][]string
}

// watchServerList records mc's server list at each change, from the first
// list of want addresses on.
func (c *realCluster) watchServerList(ctx context.Context, mc *cachev1.Memcached, want int) *serverList {
	GinkgoHelper()
	l := &serverList{want: want}
	perSlice := map[string][]string{}
	c.watchEach(ctx, &discoveryv1.EndpointSliceList{}, func(ev watch.Event) {
		s, ok := ev.Object.(*discoveryv1.EndpointSlice)
		if !ok {
			return
		}
		perSlice[s.Name] = nil
		for _, e := range s.Endpoints {
			if ev.Type != watch.Deleted && ptr.Deref(e.Conditions.Ready, false) {
				perSlice[s.Name] = append(perSlice[s.Name], e.Addresses...)
			}
		}
		var all []string
		for _, addrs := range perSlice {
			all = append(all, addrs...)
		}
		slices.Sort(all)
		l.see(all)
	}, client.InNamespace(mc.Namespace), client.MatchingLabels{discoveryv1.LabelServiceName: mc.Name})
	eventually(ctx, func() []string { return l.last() }).Should(HaveLen(want), "the Service's addresses")
	return l
}

func (l *serverList) see(addrs []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := len(l.lists)
	if (n == 0 && len(addrs) < l.want) || (n > 0 && slices.Equal(l.lists[n-1], addrs)) {
		return
	}
	l.lists = append(l.lists, addrs)
}

func (l *serverList) last() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.lists) == 0 {
		return nil
	}
	return l.lists[len(l.lists)-1]
}

func (l *serverList) fewest() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	fewest := l.want
	for _, addrs := range l.lists {
		fewest = min(fewest, len(addrs))
	}
	return fewest
}

// changes describes each change of the list: its addresses removed, then
// added, as "-10.88.0.3 +10.88.0.9".
func (l *serverList) changes() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var changes []string
	for i := 1; i < len(l.lists); i++ {
		var diff []string
		for _, a := range l.lists[i-1] {
			if !slices.Contains(l.lists[i], a) {
				diff = append(diff, "-"+a)
			}
		}
		for _, a := range l.lists[i] {
			if !slices.Contains(l.lists[i-1], a) {
				diff = append(diff, "+"+a)
			}
		}
		changes = append(changes, strings.Join(diff, " "))
	}
	return changes
}
