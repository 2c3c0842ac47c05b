package controllers_test

import (
	"context"
	"fmt"
	"maps"
	"net"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
	"github.com/example-inc/memcached-operator/api/v1/gen"
	"github.com/example-inc/memcached-operator/certs/certstest"
	"github.com/example-inc/memcached-operator/controllers"
	"github.com/example-inc/memcached-operator/controllers/operand"
	"github.com/example-inc/memcached-operator/hack/local-cluster/memcachedproc"
	"github.com/example-inc/memcached-operator/test/framework/memcache"
)

// envtest runs no Deployment controller and no kubelet: the specs make the
// pods a rollout would, and real memcached servers answer at their
// addresses (loopback addresses of their own, on one port, as pods have).
var _ = Describe("a rollout paced by warmth", Ordered, func() {
	var port int
	// pacingOptions read counters every 300 ms, and write a rollout's
	// progress to status as it comes.
	pacingOptions := func() controllers.Options {
		opts := suiteOptions()
		opts.Warmup = &controllers.WarmupOptions{Interval: 300 * time.Millisecond, Port: port}
		opts.ProgressInterval = 100 * time.Millisecond
		return opts
	}
	// servers are the memcached standing in for the pods, by address.
	servers := map[string]*memcache.Client{}
	BeforeAll(func() {
		ports, err := certstest.FreePorts(1)
		Expect(err).NotTo(HaveOccurred())
		port = ports[0]
		// 127.0.0.26 is never filled: an idle cache.
		for _, ip := range []string{"127.0.0.21", "127.0.0.22", "127.0.0.23", "127.0.0.24", "127.0.0.26"} {
			srv, err := memcachedproc.Shipped().StartAt(ctx, operand.Command(operand.FromSpec(&gen.Memcached("ns", "a").Spec)),
				ip, port, filepath.Join(GinkgoT().TempDir(), ip+".log"))
			Expect(err).NotTo(HaveOccurred())
			DeferCleanup(func() error { return srv.Stop(10 * time.Second) })
			c, err := memcache.Dial(ctx, srv.Addr)
			Expect(err).NotTo(HaveOccurred())
			DeferCleanup(c.Close)
			servers[ip] = c
		}
		runOperator(pacingOptions())
	})

	fill := func(ip string, from, to int) {
		GinkgoHelper()
		for i := from; i < to; i++ {
			Expect(servers[ip].Set("key-"+strconv.Itoa(i), []byte("v"))).To(Succeed())
		}
	}
	// load has clients read key-0 from the memcached at each of ips, over
	// and over, until the spec ends: peers that serve, as a cache in use.
	load := func(ips ...string) {
		loadCtx, stop := context.WithCancel(ctx)
		var wg sync.WaitGroup
		DeferCleanup(func() { stop(); wg.Wait() })
		for _, ip := range ips {
			c, err := memcache.Dial(loadCtx, net.JoinHostPort(ip, strconv.Itoa(port)))
			Expect(err).NotTo(HaveOccurred())
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() { _ = c.Close() }()
				for loadCtx.Err() == nil {
					if _, err := c.Get("key-0"); err != nil {
						return
					}
				}
			}()
		}
	}
	deploymentOf := func(g Gomega, mc *cachev1.Memcached) *appsv1.Deployment {
		return objectOf(g, mc, &appsv1.Deployment{})
	}
	gated := func(g Gomega, mc *cachev1.Memcached) bool {
		return len(deploymentOf(g, mc).Spec.Template.Spec.ReadinessGates) > 0
	}
	// pod makes a running pod of mc's Deployment at ip, its containers
	// ready since readySince. Of hash "old" it is a pod of the template
	// before the gate; of any other, one of the current template.
	pod := func(mc *cachev1.Memcached, name, hash, ip string, readySince time.Time) *corev1.Pod {
		GinkgoHelper()
		tmpl := deploymentOf(Default, mc).Spec.Template
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: mc.Namespace, Name: name},
			Spec:       corev1.PodSpec{Containers: tmpl.Spec.Containers, Volumes: tmpl.Spec.Volumes},
		}
		if hash != "old" {
			p.Spec.ReadinessGates = tmpl.Spec.ReadinessGates
		}
		p.Labels = map[string]string{appsv1.DefaultDeploymentUniqueLabelKey: hash}
		maps.Copy(p.Labels, tmpl.Labels)
		Expect(k8s.Create(ctx, p)).To(Succeed())
		DeferCleanup(func() { Expect(client.IgnoreNotFound(k8s.Delete(ctx, p, client.GracePeriodSeconds(0)))).To(Succeed()) })
		patch := client.MergeFrom(p.DeepCopy())
		p.Status = corev1.PodStatus{Phase: corev1.PodRunning, PodIP: ip, PodIPs: []corev1.PodIP{{IP: ip}},
			Conditions: []corev1.PodCondition{{Type: corev1.ContainersReady, Status: corev1.ConditionTrue,
				LastTransitionTime: metav1.NewTime(readySince)}}}
		Expect(k8s.Status().Patch(ctx, p, patch)).To(Succeed())
		return p
	}
	warmOf := func(p *corev1.Pod) func(Gomega) *corev1.PodCondition {
		return func(g Gomega) *corev1.PodCondition {
			got := &corev1.Pod{}
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(p), got)).To(Succeed())
			for _, c := range got.Status.Conditions {
				if c.Type == controllers.WarmCondition {
					return &c
				}
			}
			return nil
		}
	}
	warming := func(mc *cachev1.Memcached) func(Gomega) *metav1.Condition {
		return conditionOf(mc, cachev1.ConditionWarming)
	}
	// nowhere keeps the pods the suite's controller-manager makes for a
	// Deployment off its kwok node: pending, they have no address that a
	// rollout's pacing could ask, and only the specs' own pods run.
	nowhere := func(mc *cachev1.Memcached) {
		mc.Spec.NodeSelector = map[string]string{"example.com/no-such-node": "true"}
	}
	// changePods changes mc in a way that replaces its pods.
	changePods := func(mc *cachev1.Memcached) {
		GinkgoHelper()
		patch := client.MergeFrom(mc.DeepCopy())
		mc.Spec.MaxConnections = ptr.To[int32](2048)
		Expect(k8s.Patch(ctx, mc, patch)).To(Succeed())
	}
	// rolled creates mc and changes it once, so that its pods carry the
	// warm gate, as after its first rollout.
	rolled := func(opts ...gen.MemcachedOption) *cachev1.Memcached {
		GinkgoHelper()
		mc := createMemcached(watchedNS, append([]gen.MemcachedOption{gen.WithSize(2), nowhere}, opts...)...)
		Eventually(func(g Gomega) { deploymentOf(g, mc) }).Should(Succeed())
		changePods(mc)
		Eventually(func(g Gomega) bool { return gated(g, mc) }).Should(BeTrue(), "the warm gate in the pods' template")
		return mc
	}

	It("gives a new Memcached's pods no warm gate, and adds it with the first change that replaces them", func() {
		mc := createMemcached(watchedNS, gen.WithSize(2), nowhere)
		Eventually(func(g Gomega) []metav1.Condition { return objectOf(g, mc, &cachev1.Memcached{}).Status.Conditions }).
			ShouldNot(BeEmpty(), "status written: the reconciles after creation have run")
		Expect(gated(Default, mc)).To(BeFalse(), "a new Memcached's pods replace nothing")
		generation := deploymentOf(Default, mc).Generation

		By("restarting the operator, as an upgrade does")
		before := reconciles()
		op.stop()
		op = startOperator(pacingOptions())
		settled(before, 1)
		Expect(deploymentOf(Default, mc).Generation).To(Equal(generation), "no change of the Deployment: no pod restarts")

		By("changing the pods")
		changePods(mc)
		Eventually(func(g Gomega) []corev1.PodReadinessGate {
			return deploymentOf(g, mc).Spec.Template.Spec.ReadinessGates
		}).Should(ConsistOf(corev1.PodReadinessGate{ConditionType: controllers.WarmCondition}))
	})

	It("holds a rollout's new pods, each over its own windows, until they hold half their peers' median items, and says why", func() {
		mc := rolled()
		fill("127.0.0.21", 0, 100)
		fill("127.0.0.22", 100, 300)
		load("127.0.0.21", "127.0.0.22")
		pod(mc, mc.Name+"-old-1", "old", "127.0.0.21", time.Now())
		pod(mc, mc.Name+"-old-2", "old", "127.0.0.22", time.Now())
		// Two at once, as a scale up during a rollout makes them.
		fresh := pod(mc, mc.Name+"-new-1", "new", "127.0.0.23", time.Now())
		second := pod(mc, mc.Name+"-new-2", "new", "127.0.0.24", time.Now())
		Eventually(warming(mc)).Should(And(
			HaveField("Status", metav1.ConditionTrue), HaveField("Reason", cachev1.ReasonWaitingForWarmth),
			HaveField("Message", MatchRegexp(`^pod %s: it holds 0 items, 0%% of its peers' median 100 \(50%% wanted\).*the rollout goes on by \S+ at the latest$`, fresh.Name))))
		// A few windows: each pod is judged against its peers' reads of
		// its own rounds, not of the other's a moment before.
		Consistently(func() []*corev1.PodCondition {
			return []*corev1.PodCondition{warmOf(fresh)(Default), warmOf(second)(Default)}
		}, time.Second, interval).Should(HaveEach(BeNil()), "the new pods are not marked warm")

		By("refilling them to half their peers' median")
		fill("127.0.0.23", 0, 50)
		fill("127.0.0.24", 0, 50)
		for _, p := range []*corev1.Pod{fresh, second} {
			Eventually(warmOf(p)).Should(And(Not(BeNil()),
				HaveField("Status", corev1.ConditionTrue), HaveField("Reason", "PodWarm"),
				HaveField("Message", ContainSubstring("it holds 50 items, 50% of its peers' median 100"))), "pod %s", p.Name)
		}
		Eventually(warming(mc)).Should(And(
			HaveField("Status", metav1.ConditionFalse), HaveField("Reason", cachev1.ReasonNoPodWarming)))
		Eventually(eventsOf(mc)).Should(ContainElement(HavePrefix(fmt.Sprintf("PodWarm: pod %s is warm: it holds 50 items", fresh.Name))))
	})

	It("lets the rollout go on after the warm-up timeout, and says so", func() {
		mc := rolled(func(mc *cachev1.Memcached) {
			mc.Spec.Rollout = &cachev1.MemcachedRollout{WarmupTimeout: &metav1.Duration{Duration: time.Minute}}
		})
		// Nothing answers at the new pod's address, and its containers
		// have been ready for longer than the timeout.
		pod(mc, mc.Name+"-old-1", "old", "127.0.0.21", time.Now())
		pod(mc, mc.Name+"-old-2", "old", "127.0.0.22", time.Now())
		fresh := pod(mc, mc.Name+"-new-1", "new", "127.0.0.25", time.Now().Add(-2*time.Minute))
		Eventually(warmOf(fresh)).Should(And(Not(BeNil()), HaveField("Reason", "WarmupTimedOut"),
			HaveField("Message", HavePrefix("its counters could not be read"))))
		Eventually(eventsOf(mc)).Should(ContainElement(HavePrefix(fmt.Sprintf("WarmupTimedOut: pod %s is not warm after 1m0s, and the rollout goes on", fresh.Name))))
	})

	It("marks a new pod warm at its first read when its peers hold no items, the rollout never waiting", func() {
		mc := rolled()
		pod(mc, mc.Name+"-old-1", "old", "127.0.0.26", time.Now())
		fresh := pod(mc, mc.Name+"-new-1", "new", "127.0.0.26", time.Now())
		Eventually(warmOf(fresh)).Should(And(Not(BeNil()), HaveField("Reason", "PodWarm"), HaveField("Message", "its peers hold no items")))
		Expect(warming(mc)(Default)).To(BeNil(), "no Warming condition: nothing waited for a second read")
	})

	DescribeTable("marks at once a pod that no rollout waits for",
		func(reason string, opts []gen.MemcachedOption, otherHash string) {
			mc := rolled(opts...)
			pod(mc, mc.Name+"-a", otherHash, "127.0.0.21", time.Now())
			fresh := pod(mc, mc.Name+"-b", "new", "127.0.0.23", time.Now())
			Eventually(warmOf(fresh)).Should(And(Not(BeNil()), HaveField("Status", corev1.ConditionTrue), HaveField("Reason", reason)))
			Expect(warming(mc)(Default)).To(BeNil(), "no Warming condition: nothing waited")
		},
		Entry("one that replaces nothing (a scale up)", "NothingReplaced", nil, "new"),
		Entry("one of a Memcached with pacing None", "PacingOff", []gen.MemcachedOption{func(mc *cachev1.Memcached) {
			mc.Spec.Rollout = &cachev1.MemcachedRollout{Pacing: cachev1.RolloutPacingNone}
		}}, "old"),
		Entry("one that serves TLS, whose counters the operator does not read", "WarmupNotMeasured",
			[]gen.MemcachedOption{gen.WithTLS("cache-tls")}, "old"),
	)
})
