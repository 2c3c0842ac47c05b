package controllers_test

import (
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/types"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apitypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
	"github.com/example-inc/memcached-operator/api/v1/gen"
	"github.com/example-inc/memcached-operator/controllers"
)

const (
	timeout  = 60 * time.Second
	interval = 100 * time.Millisecond
)

var nameSeq atomic.Int32

// defaultCommand is the whole command line of a Memcached that keeps
// memcached's defaults: an extra or a missing flag is a difference.
var defaultCommand = []string{"memcached", "--port=11211", "--memory-limit=64", "--extended=modern", "--verbose"}

// createMemcached creates a Memcached with a fresh name in ns and deletes it
// when the spec ends.
func createMemcached(ns string, opts ...gen.MemcachedOption) *cachev1.Memcached {
	GinkgoHelper()
	mc := gen.Memcached(ns, fmt.Sprintf("mc-%d", nameSeq.Add(1)), opts...)
	create(mc)
	return mc
}

// create creates obj and deletes it, if it is still there, when the spec
// ends.
func create(obj client.Object) {
	GinkgoHelper()
	Expect(k8s.Create(ctx, obj)).To(Succeed())
	DeferCleanup(func() { Expect(client.IgnoreNotFound(k8s.Delete(ctx, obj))).To(Succeed()) })
}

func key(mc *cachev1.Memcached) client.ObjectKey { return client.ObjectKeyFromObject(mc) }

// getOf returns a function reading mc's object of obj's kind (it has mc's
// name) into obj, for a wait until it is there or gone.
func getOf(mc *cachev1.Memcached, obj client.Object) func() error {
	return func() error { return k8s.Get(ctx, key(mc), obj) }
}

// objectOf reads mc's object of obj's kind (it has mc's name) into obj.
func objectOf[T client.Object](g Gomega, mc *cachev1.Memcached, obj T) T {
	g.Expect(k8s.Get(ctx, key(mc), obj)).To(Succeed())
	return obj
}

// eventuallyAvailable waits until mc reports size ready pods, a finished
// rollout and all its objects applied, for its current generation, and
// returns it.
func eventuallyAvailable(mc *cachev1.Memcached, size int32) *cachev1.Memcached {
	GinkgoHelper()
	pods := fmt.Sprintf("%d pods", size)
	if size == 1 {
		pods = "1 pod"
	}
	got := &cachev1.Memcached{}
	Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, key(mc), got)).To(Succeed())
		g.Expect(got.Status.ObservedGeneration).To(Equal(got.Generation))
		g.Expect(got.Status.ReadyReplicas).To(Equal(size))
		g.Expect(got.Status.Nodes).To(HaveLen(int(size)))
		conditions := map[string]types.GomegaMatcher{
			cachev1.ConditionAvailable: condition(metav1.ConditionTrue, cachev1.ReasonAllReplicasReady,
				fmt.Sprintf("%d of %s ready", size, pods)),
			cachev1.ConditionProgressing: condition(metav1.ConditionFalse, cachev1.ReasonRolloutComplete, pods+" up to date"),
			cachev1.ConditionDegraded:    reconciledCondition(),
		}
		g.Expect(got.Status.Conditions).To(HaveLen(len(conditions)))
		for _, c := range got.Status.Conditions {
			g.Expect(c).To(And(conditions[c.Type], HaveField("ObservedGeneration", got.Generation)), "condition %s", c.Type)
		}
	}).Should(Succeed())
	return got
}

func setSize(mc *cachev1.Memcached, size int32) {
	GinkgoHelper()
	Expect(k8s.Patch(ctx, gen.Memcached(mc.Namespace, mc.Name),
		client.RawPatch("application/merge-patch+json", fmt.Appendf(nil, `{"spec":{"size":%d}}`, size)))).To(Succeed())
}

// reconciles is how many reconciles the memcached controller has finished
// in this process, from controller-runtime's metrics.
func reconciles() float64 {
	GinkgoHelper()
	families, err := ctrlmetrics.Registry.Gather()
	Expect(err).NotTo(HaveOccurred())
	total := 0.0
	for _, f := range families {
		if f.GetName() != "controller_runtime_reconcile_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "controller" && l.GetValue() == "memcached" {
					total += m.GetCounter().GetValue()
				}
			}
		}
	}
	return total
}

// settled waits until the operator has reconciled at least n more times than
// before, so that a following assertion sees the result of those reconciles.
func settled(before float64, n int) {
	GinkgoHelper()
	Eventually(reconciles).Should(BeNumerically(">=", before+float64(n)))
}

// eventsOf returns a function listing mc's events as "Reason: note", as
// kubectl describe shows them, with "(n times)" after an event repeated.
func eventsOf(mc *cachev1.Memcached) func(Gomega) []string {
	return func(g Gomega) []string {
		events := &eventsv1.EventList{}
		g.Expect(k8s.List(ctx, events, client.InNamespace(mc.Namespace))).To(Succeed())
		var notes []string
		for _, e := range events.Items {
			if e.Regarding.UID != mc.UID {
				continue
			}
			note := e.Reason + ": " + e.Note
			if e.Series != nil {
				note += fmt.Sprintf(" (%d times)", e.Series.Count)
			}
			notes = append(notes, note)
		}
		return notes
	}
}

// conditionOf returns a function reading mc's condition of type typ.
func conditionOf(mc *cachev1.Memcached, typ string) func(Gomega) *metav1.Condition {
	return func(g Gomega) *metav1.Condition {
		return meta.FindStatusCondition(objectOf(g, mc, &cachev1.Memcached{}).Status.Conditions, typ)
	}
}

func degradedOf(mc *cachev1.Memcached) func(Gomega) *metav1.Condition {
	return conditionOf(mc, cachev1.ConditionDegraded)
}

// condition matches a condition's status, reason and message.
func condition(status metav1.ConditionStatus, reason, message string) types.GomegaMatcher {
	return And(HaveField("Status", status), HaveField("Reason", reason), HaveField("Message", message))
}

// reconciledCondition matches the Degraded condition of a Memcached whose
// objects are all applied.
func reconciledCondition() types.GomegaMatcher {
	return condition(metav1.ConditionFalse, cachev1.ReasonReconciled, "all objects applied")
}

// nameInUse matches the Degraded condition of a Memcached blocked by
// someone else's object of its name.
func nameInUse(kind, name string) types.GomegaMatcher {
	return condition(metav1.ConditionTrue, cachev1.ReasonNameInUse, fmt.Sprintf("a %s named %q already exists and "+
		"does not belong to this Memcached, so the operator leaves it alone and creates nothing; delete that %s "+
		"or give the Memcached another name", kind, name, kind))
}

// blockedBy creates theirs, someone else's object, then a Memcached of its
// name with opts, and waits until the Memcached reports the clash.
func blockedBy(theirs client.Object, kind string, opts ...gen.MemcachedOption) *cachev1.Memcached {
	GinkgoHelper()
	create(theirs)
	Expect(k8s.Get(ctx, client.ObjectKeyFromObject(theirs), theirs)).To(Succeed())
	mc := gen.Memcached(theirs.GetNamespace(), theirs.GetName(), opts...)
	create(mc)
	Eventually(degradedOf(mc)).Should(nameInUse(kind, theirs.GetName()))
	return mc
}

// expectReportedOnce makes the operator find mc blocked again three times,
// by changing its annotations (each change is a reconcile), and checks that
// the block was reported once all the same: one event, one log line, and
// one status write since mc was created.
func expectReportedOnce(mc *cachev1.Memcached, reason string) {
	GinkgoHelper()
	for i := range 3 {
		before := reconciles()
		Expect(k8s.Patch(ctx, gen.Memcached(mc.Namespace, mc.Name), client.RawPatch(apitypes.MergePatchType,
			fmt.Appendf(nil, `{"metadata":{"annotations":{"test/poke":"%d"}}}`, i)))).To(Succeed())
		settled(before, 1)
	}
	Expect(logLines("not reconciling: ", fmt.Sprintf("%q", mc.Namespace+"/"+mc.Name))).To(HaveLen(1), "log lines")
	Expect(op.requests.To(http.MethodPatch, fmt.Sprintf("/apis/%s/namespaces/%s/memcacheds/%s/status",
		cachev1.GroupVersion, mc.Namespace, mc.Name))).To(Equal(1), "status writes")
	// A repeated event becomes a series, which eventsOf shows; the
	// recorder sends it in the background.
	Consistently(eventsOf(mc), time.Second, interval).Should(ConsistOf(HavePrefix(reason+": ")), "events")
}

// expectUntouched checks that obj, as read before, is as it was: its spec
// (by generation), labels and owners, and that the operator never wrote it
// (its controllers, such as the Deployment controller, annotate it).
func expectUntouched(obj client.Object) {
	GinkgoHelper()
	live := obj.DeepCopyObject().(client.Object)
	Expect(k8s.Get(ctx, client.ObjectKeyFromObject(obj), live)).To(Succeed())
	Expect(live.GetGeneration()).To(Equal(obj.GetGeneration()), "its spec")
	Expect(live.GetLabels()).To(Equal(obj.GetLabels()))
	Expect(live.GetOwnerReferences()).To(Equal(obj.GetOwnerReferences()))
	for _, m := range live.GetManagedFields() {
		Expect(m.Manager).NotTo(Equal(controllers.FieldOwner))
	}
}

var _ = Describe("Memcached reconciler", func() {
	It("creates a Deployment, a headless Service and a PDB as the Memcached says", func() {
		mc := createMemcached(watchedNS, gen.WithSize(3))
		Expect(k8s.Get(ctx, key(mc), mc)).To(Succeed())

		d := &appsv1.Deployment{}
		Eventually(getOf(mc, d)).Should(Succeed())
		Expect(d.Spec.Replicas).To(HaveValue(Equal(int32(3))))
		Expect(d.Labels).To(Equal(map[string]string{
			"app.kubernetes.io/name":       "memcached",
			"app.kubernetes.io/instance":   mc.Name,
			"app.kubernetes.io/managed-by": "memcached-operator",
		}))
		Expect(metav1.GetControllerOf(d)).To(HaveField("UID", mc.UID))
		c := d.Spec.Template.Spec.Containers[0]
		Expect(c.Image).To(Equal(controllers.DefaultMemcachedImage))
		Expect(c.Command).To(Equal(defaultCommand))
		Expect(c.Ports).To(ConsistOf(HaveField("ContainerPort", int32(11211))))
		Expect(c.ReadinessProbe.TCPSocket.Port).To(Equal(intstr.FromString("memcached")))
		Expect(c.LivenessProbe.TCPSocket.Port).To(Equal(intstr.FromString("memcached")))
		Expect(c.Resources.Limits.Memory().String()).To(Equal("128Mi"))
		Expect(c.SecurityContext.AllowPrivilegeEscalation).To(HaveValue(BeFalse()))
		Expect(d.Spec.Template.Spec.SecurityContext.RunAsNonRoot).To(HaveValue(BeTrue()))

		svc := &corev1.Service{}
		Eventually(getOf(mc, svc)).Should(Succeed())
		Expect(svc.Spec.ClusterIP).To(Equal(corev1.ClusterIPNone))
		Expect(svc.Spec.Ports).To(ConsistOf(HaveField("Port", int32(11211))))
		Expect(svc.Spec.Selector).To(Equal(d.Spec.Selector.MatchLabels))

		pdb := &policyv1.PodDisruptionBudget{}
		Eventually(getOf(mc, pdb)).Should(Succeed())
		Expect(pdb.Spec.MaxUnavailable).To(HaveValue(Equal(intstr.FromInt32(1))))
	})

	It("lists the real pod names in status and reports Available", func() {
		mc := createMemcached(watchedNS, gen.WithSize(3))
		got := eventuallyAvailable(mc, 3)

		pods := &corev1.PodList{}
		Expect(k8s.List(ctx, pods, client.InNamespace(mc.Namespace),
			client.MatchingLabels{"app.kubernetes.io/instance": mc.Name})).To(Succeed())
		var names []string
		for _, p := range pods.Items {
			Expect(p.Spec.NodeName).NotTo(BeEmpty(), "the scheduler placed every pod")
			names = append(names, p.Name)
		}
		Expect(got.Status.Nodes).To(ConsistOf(names))
		Expect(meta.FindStatusCondition(got.Status.Conditions, cachev1.ConditionDegraded)).To(reconciledCondition())
	})

	It("follows resizes up, down and to one, with the PDB only while size >= 2", func() {
		mc := createMemcached(watchedNS, gen.WithSize(2))
		eventuallyAvailable(mc, 2)

		setSize(mc, 5)
		Eventually(conditionOf(mc, cachev1.ConditionProgressing)).Should(Or(
			condition(metav1.ConditionTrue, cachev1.ReasonScaling, "scaling to 5 pods"),
			condition(metav1.ConditionFalse, cachev1.ReasonRolloutComplete, "5 pods up to date")))
		eventuallyAvailable(mc, 5)

		setSize(mc, 1)
		eventuallyAvailable(mc, 1)
		Eventually(getOf(mc, &policyv1.PodDisruptionBudget{})).Should(Satisfy(apierrors.IsNotFound))

		setSize(mc, 2)
		eventuallyAvailable(mc, 2)
		Eventually(getOf(mc, &policyv1.PodDisruptionBudget{})).Should(Succeed())

		// Creation records no event: the status shows it.
		Eventually(eventsOf(mc)).Should(ConsistOf(
			"Resized: resized from 2 to 5 pods",
			"Resized: resized from 5 to 1 pod",
			"Resized: resized from 1 to 2 pods",
		))
	})

	It("resizes through the scale subresource, as kubectl scale does", func() {
		mc := createMemcached(watchedNS, gen.WithSize(1))
		eventuallyAvailable(mc, 1)

		scale := &autoscalingv1.Scale{}
		Expect(k8s.SubResource("scale").Get(ctx, mc, scale)).To(Succeed())
		Expect(scale.Status.Selector).To(Equal("app.kubernetes.io/instance=" + mc.Name + ",app.kubernetes.io/name=memcached"))
		scale.Spec.Replicas = 4
		Expect(k8s.SubResource("scale").Update(ctx, mc, client.WithSubResourceBody(scale))).To(Succeed())
		eventuallyAvailable(mc, 4)
	})

	// undid is the event of a repair that is not a resize.
	const undid = "Repaired: undid a change to the Deployment that the Memcached does not ask for"
	memcachedIn := func(d *appsv1.Deployment) *corev1.Container { return &d.Spec.Template.Spec.Containers[0] }
	DescribeTable("repairs a hand edit of the Deployment, and says so",
		func(edit func(*appsv1.Deployment), field func(*appsv1.Deployment) any, repaired types.GomegaMatcher, event string) {
			mc := createMemcached(watchedNS, gen.WithSize(2))
			eventuallyAvailable(mc, 2)
			d := objectOf(Default, mc, &appsv1.Deployment{})
			edit(d)
			// An Update, as kubectl edit does: the edited fields change hands.
			Expect(k8s.Update(ctx, d, client.FieldOwner("kubectl-edit"))).To(Succeed())
			Eventually(func(g Gomega) any { return field(objectOf(g, mc, d)) }).Should(repaired)
			eventuallyAvailable(mc, 2)
			// A repair is not a resize, whatever it changed.
			Eventually(eventsOf(mc)).Should(ConsistOf(event))
		},
		Entry("replicas", func(d *appsv1.Deployment) { d.Spec.Replicas = ptr.To[int32](7) },
			func(d *appsv1.Deployment) any { return d.Spec.Replicas }, HaveValue(Equal(int32(2))),
			"Repaired: set the Deployment back to 2 pods: it had been changed to 7 (spec.size sets the number of pods)"),
		Entry("image", func(d *appsv1.Deployment) { memcachedIn(d).Image = "evil:latest" },
			func(d *appsv1.Deployment) any { return memcachedIn(d).Image }, Equal(controllers.DefaultMemcachedImage), undid),
		Entry("command", func(d *appsv1.Deployment) { memcachedIn(d).Command = []string{"sh"} },
			func(d *appsv1.Deployment) any { return memcachedIn(d).Command }, Equal(defaultCommand), undid),
		Entry("ports", func(d *appsv1.Deployment) { memcachedIn(d).Ports[0].ContainerPort = 1234 },
			func(d *appsv1.Deployment) any { return memcachedIn(d).Ports }, ConsistOf(HaveField("ContainerPort", int32(11211))), undid),
		Entry("probes", func(d *appsv1.Deployment) { memcachedIn(d).ReadinessProbe = nil },
			func(d *appsv1.Deployment) any { return memcachedIn(d).ReadinessProbe }, Not(BeNil()), undid),
		Entry("labels", func(d *appsv1.Deployment) { delete(d.Labels, "app.kubernetes.io/name") },
			func(d *appsv1.Deployment) any { return d.Labels }, HaveKeyWithValue("app.kubernetes.io/name", "memcached"), undid),
		Entry("proxy env", func(d *appsv1.Deployment) {
			memcachedIn(d).Env = []corev1.EnvVar{{Name: "HTTPS_PROXY", Value: "http://elsewhere.example:3128"}, {Name: "HTTP_PROXY", Value: "http://rogue:3128"}}
		}, func(d *appsv1.Deployment) any { return memcachedIn(d).Env }, Equal(suiteProxy), undid),
	)

	It("leaves fields others own alone and does not flap", func() {
		mc := createMemcached(watchedNS, gen.WithSize(2))
		eventuallyAvailable(mc, 2)
		d := objectOf(Default, mc, &appsv1.Deployment{})

		before := reconciles()
		patch := client.MergeFrom(d.DeepCopy())
		d.Labels["team"] = "cache"
		if d.Spec.Template.Annotations == nil {
			d.Spec.Template.Annotations = map[string]string{}
		}
		d.Spec.Template.Annotations["kubectl.kubernetes.io/restartedAt"] = time.Now().Format(time.RFC3339)
		Expect(k8s.Patch(ctx, d, patch, client.FieldOwner("kubectl-rollout"))).To(Succeed())
		generation := d.Generation
		settled(before, 1)

		writes := op.requests.Writes()["PATCH deployments"]
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, key(mc), d)).To(Succeed())
			g.Expect(d.Labels).To(HaveKeyWithValue("team", "cache"))
			g.Expect(d.Spec.Template.Annotations).To(HaveKey("kubectl.kubernetes.io/restartedAt"))
			g.Expect(d.Generation).To(Equal(generation), "nobody changed the spec after the restart")
		}).Should(Succeed())
		eventuallyAvailable(mc, 2)
		Expect(op.requests.Writes()["PATCH deployments"]).To(Equal(writes), "the operator applied nothing")
	})

	It("reconciles nothing for a status write of its PDB, and still for an edit of the PDB's metadata", func() {
		mc := createMemcached(watchedNS, gen.WithSize(2))
		eventuallyAvailable(mc, 2)
		pdb := &policyv1.PodDisruptionBudget{}
		// The disruption controller's own writes come first: its status
		// counts both pods.
		Eventually(func(g Gomega) int32 { return objectOf(g, mc, pdb).Status.CurrentHealthy }).Should(BeEquivalentTo(2))
		// Its reconciles only: the count of all would take in those of
		// other specs' deleted Memcacheds, late requeues that find nothing.
		// Each of mc's reconciles logs a line naming it, "reconciled" or
		// its error.
		reconcilesOfMC := func() int { return len(logLines(`"memcached": "` + key(mc).String() + `"`)) }
		// The last changes of its Deployment and pods reach the reconciler
		// a coalescing delay (a second) after they happen: the count starts
		// once none is pending.
		var before int
		Eventually(func(g Gomega) {
			before = reconcilesOfMC()
			g.Consistently(reconcilesOfMC, 1500*time.Millisecond, interval).Should(Equal(before))
		}).Should(Succeed())

		patch := client.MergeFrom(pdb.DeepCopy())
		pdb.Status.DisruptionsAllowed++
		Expect(k8s.Status().Patch(ctx, pdb, patch)).To(Succeed())
		// Longer than the delay that coalesces a PDB's events.
		Consistently(reconcilesOfMC, 3*time.Second, interval).Should(Equal(before), "reconciles after a status write of the PDB")

		Expect(k8s.Patch(ctx, pdb, client.RawPatch(apitypes.MergePatchType, []byte(`{"metadata":{"annotations":{"test/poke":"1"}}}`)))).To(Succeed())
		Eventually(reconcilesOfMC).Should(BeNumerically(">", before))
	})

	It("recreates a deleted Deployment, Service and PDB", func() {
		mc := createMemcached(watchedNS, gen.WithSize(2))
		eventuallyAvailable(mc, 2)
		for _, obj := range []client.Object{&appsv1.Deployment{}, &corev1.Service{}, &policyv1.PodDisruptionBudget{}} {
			Expect(k8s.Get(ctx, key(mc), obj)).To(Succeed())
			uid := obj.GetUID()
			Expect(k8s.Delete(ctx, obj, client.PropagationPolicy(metav1.DeletePropagationBackground))).To(Succeed())
			Eventually(func(g Gomega) {
				g.Expect(k8s.Get(ctx, key(mc), obj)).To(Succeed())
				g.Expect(obj.GetUID()).NotTo(Equal(uid))
			}).Should(Succeed(), "%T recreated", obj)
		}
		eventuallyAvailable(mc, 2)
		Eventually(eventsOf(mc)).Should(ConsistOf(
			"Repaired: recreated the Deployment, which had been deleted",
			"Repaired: recreated the Service, which had been deleted",
			"Repaired: recreated the PodDisruptionBudget, which had been deleted",
		))
	})

	DescribeTable("leaves someone else's object of its name alone, creates nothing, and says why once",
		func(kind string, theirs func(ns, name string) client.Object) {
			obj := theirs(watchedNS, fmt.Sprintf("mc-%d", nameSeq.Add(1)))
			mc := blockedBy(obj, kind, gen.WithSize(2))
			Eventually(blockedSeries(mc)).Should(Equal(map[string]float64{cachev1.ReasonNameInUse: 1}))
			expectReportedOnce(mc, cachev1.ReasonNameInUse)
			expectUntouched(obj)

			got := objectOf(Default, mc, &cachev1.Memcached{})
			Expect(got.Status.ReadyReplicas).To(BeZero(), "their pods are not the Memcached's")
			Expect(got.Status.Nodes).To(BeEmpty(), "their pods are not the Memcached's")
			for _, o := range []client.Object{&appsv1.Deployment{}, &corev1.Service{}, &policyv1.PodDisruptionBudget{}} {
				err := k8s.Get(ctx, key(mc), o)
				if err == nil {
					Expect(o.GetUID()).To(Equal(obj.GetUID()), "no %T half-created", o)
					continue
				}
				Expect(apierrors.IsNotFound(err)).To(BeTrue(), "no %T half-created: %v", o, err)
			}
			// The blocked gauge goes with the Memcached.
			Expect(k8s.Delete(ctx, mc)).To(Succeed())
			Eventually(blockedSeries(mc)).Should(BeEmpty())
		},
		Entry("a Deployment", "Deployment", func(ns, name string) client.Object { return gen.UnrelatedDeployment(ns, name, 1) }),
		Entry("a Service", "Service", func(ns, name string) client.Object { return gen.UnrelatedService(ns, name) }),
		Entry("a PodDisruptionBudget", "PodDisruptionBudget", func(ns, name string) client.Object { return gen.UnrelatedPDB(ns, name) }),
		// The managed-by label puts it in the operator's cache: found there,
		// not by the look-up before a creation.
		Entry("a Service that carries the operator's label", "Service", func(ns, name string) client.Object {
			svc := gen.UnrelatedService(ns, name)
			svc.Labels["app.kubernetes.io/managed-by"] = controllers.FieldOwner
			return svc
		}),
	)

	It("looks again by itself once someone else's object of its name is gone", func() {
		theirs := gen.UnrelatedDeployment(watchedNS, fmt.Sprintf("mc-%d", nameSeq.Add(1)), 1)
		mc := blockedBy(theirs, "Deployment", gen.WithSize(2))
		// The other Deployment is not in the operator's cache, so its
		// deletion raises no event: the operator polls.
		Expect(k8s.Delete(ctx, theirs)).To(Succeed())
		Eventually(getOf(mc, &appsv1.Deployment{})).Should(Satisfy(apierrors.IsNotFound))
		eventuallyAvailable(mc, 2)
		Expect(degradedOf(mc)(Default)).To(reconciledCondition())
		Expect(eventsOf(mc)(Default)).To(ConsistOf(HavePrefix("NameInUse: ")), "a first creation is no repair")
	})

	It("leaves someone else's PDB of its name alone when a resize needs one, and still counts its own pods", func() {
		mc := createMemcached(watchedNS, gen.WithSize(1))
		eventuallyAvailable(mc, 1)
		theirs := gen.UnrelatedPDB(watchedNS, mc.Name)
		create(theirs)
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(theirs), theirs)).To(Succeed())

		setSize(mc, 2)
		Eventually(degradedOf(mc)).Should(nameInUse("PodDisruptionBudget", mc.Name))
		expectUntouched(theirs)
		got := objectOf(Default, mc, &cachev1.Memcached{})
		Expect(got.Status.ReadyReplicas).To(Equal(int32(1)), "its own pod still serves")
		Expect(got.Status.Nodes).To(HaveLen(1))
		d := objectOf(Default, mc, &appsv1.Deployment{})
		Expect(d.Spec.Replicas).To(HaveValue(Equal(int32(1))), "nothing written while blocked")
	})

	It("leaves a Memcached outside the size policy as it is, which only happens without webhooks", func() {
		mc := createMemcached(watchedNS, gen.WithSize(40))
		Eventually(degradedOf(mc)).Should(condition(metav1.ConditionTrue, cachev1.ReasonSizeOutOfPolicy,
			"spec.size 40 is outside the range the administrator allows (1 to 16), "+
				"so the operator leaves this Memcached's objects as they are; set spec.size within the range"))
		Expect(getOf(mc, &appsv1.Deployment{})()).To(Satisfy(apierrors.IsNotFound), "no pods for size 40")
		Eventually(blockedSeries(mc)).Should(Equal(map[string]float64{cachev1.ReasonSizeOutOfPolicy: 1}))
		expectReportedOnce(mc, cachev1.ReasonSizeOutOfPolicy)

		setSize(mc, 3)
		eventuallyAvailable(mc, 3)
		Eventually(blockedSeries(mc)).Should(BeEmpty())
		Expect(degradedOf(mc)(Default)).To(reconciledCondition())
		Expect(eventsOf(mc)(Default)).To(ConsistOf(HavePrefix("SizeOutOfPolicy: ")), "a first creation is no repair")
	})

	It("caches only the objects it owns, and watches only their kinds and their pods", func() {
		mc := createMemcached(watchedNS, gen.WithSize(1))
		eventuallyAvailable(mc, 1)
		stranger := gen.UnrelatedDeployment(watchedNS, "stranger", 1)
		Expect(k8s.Create(ctx, stranger)).To(Succeed())
		DeferCleanup(func() { Expect(k8s.Delete(ctx, stranger)).To(Succeed()) })
		Eventually(func(g Gomega) {
			pods := &corev1.PodList{}
			g.Expect(k8s.List(ctx, pods, client.InNamespace(watchedNS), client.MatchingLabels{"app": "stranger"})).To(Succeed())
			g.Expect(pods.Items).NotTo(BeEmpty())
		}).Should(Succeed())

		// The stranger and its pod exist on the server; the cache lists only
		// objects with the managed-by label.
		for _, list := range []client.ObjectList{&appsv1.DeploymentList{}, &corev1.PodList{}} {
			Expect(op.cache.List(ctx, list)).To(Succeed())
			items, err := meta.ExtractList(list)
			Expect(err).NotTo(HaveOccurred())
			Expect(items).NotTo(BeEmpty())
			for _, item := range items {
				Expect(item.(client.Object).GetLabels()).To(HaveKeyWithValue("app.kubernetes.io/managed-by", "memcached-operator"))
			}
		}
		// Every watch costs the operator the decoding of each change of each
		// object of its kind, so one more must be a choice, not a side effect
		// of reading a kind through the cached client.
		Expect(op.requests.Watched()).To(ConsistOf("memcacheds", "deployments", "services", "poddisruptionbudgets", "pods"))
	})

	It("ignores a Memcached in a namespace it does not watch", func() {
		mc := createMemcached(unwatchedNS, gen.WithSize(1))
		// A Memcached in the watched namespace created after it is handled,
		// so by then the other one would have been too.
		other := createMemcached(watchedNS, gen.WithSize(1))
		eventuallyAvailable(other, 1)
		Expect(getOf(mc, &appsv1.Deployment{})()).To(Satisfy(apierrors.IsNotFound))
		Expect(k8s.Get(ctx, key(mc), mc)).To(Succeed())
		Expect(mc.Status.Conditions).To(BeEmpty())
	})

	It("removes its objects through owner references when the Memcached is deleted", func() {
		mc := createMemcached(watchedNS, gen.WithSize(2))
		eventuallyAvailable(mc, 2)
		Expect(k8s.Delete(ctx, mc, client.PropagationPolicy(metav1.DeletePropagationForeground))).To(Succeed())
		for _, obj := range []client.Object{&appsv1.Deployment{}, &corev1.Service{}, &policyv1.PodDisruptionBudget{}} {
			Eventually(getOf(mc, obj)).Should(Satisfy(apierrors.IsNotFound), "%T removed", obj)
		}
		Eventually(func() ([]corev1.Pod, error) {
			pods := &corev1.PodList{}
			err := k8s.List(ctx, pods, client.InNamespace(mc.Namespace), client.MatchingLabels{"app.kubernetes.io/instance": mc.Name})
			return pods.Items, err
		}).Should(BeEmpty())
	})

	It("writes each owned object once and the status once while a rollout ends within the progress interval", func() {
		opts := suiteOptions()
		opts.ProgressInterval = timeout
		runOperator(opts)
		mc := createMemcached(watchedNS, gen.WithSize(3))
		eventuallyAvailable(mc, 3)
		Expect(op.requests.Writes()).To(Equal(map[string]int{
			"PATCH deployments":          1,
			"PATCH services":             1,
			"PATCH poddisruptionbudgets": 1,
			"PATCH memcacheds/status":    1,
		}), "server-side apply of the three objects and one status write")
		Expect(op.requests.MetadataOnlyWrites()).To(Equal(map[string]int{"PATCH memcacheds/status": 1}),
			"the status write's answer read as metadata only: the reconciler keeps only its resourceVersion")
	})

	It("holds a rollout's progress back for ten seconds by default", func() {
		// Pods that no node takes keep the rollout in progress.
		mc := createMemcached(watchedNS, gen.WithSize(2), func(mc *cachev1.Memcached) {
			mc.Spec.NodeSelector = map[string]string{"test/no-such-node": "true"}
		})
		// The first progress is held one whole interval; the reconciler
		// says how long. Waiting for the write would cost those ten seconds.
		changed := func() []string {
			return logLines("\treconciled\t", fmt.Sprintf("%q", mc.Namespace+"/"+mc.Name), `"statusChanged": true`)
		}
		Eventually(changed).ShouldNot(BeEmpty())
		Expect(changed()[0]).To(ContainSubstring(`"statusHeldFor": "10s"`))
	})

	It("makes no write on a restart or a resync when nothing changed", func() {
		var mcs []*cachev1.Memcached
		for range 3 {
			mcs = append(mcs, createMemcached(watchedNS, gen.WithSize(2)))
		}
		for _, mc := range mcs {
			eventuallyAvailable(mc, 2)
		}

		op.stop()
		before := reconciles()
		resync := 2 * time.Second
		op = startOperator(suiteOptions(), func(o *ctrl.Options) { o.Cache.SyncPeriod = &resync })
		DeferCleanup(restoreOperator)
		// The start reconciles every Memcached once; each resync of the
		// Deployments, Services, PDBs and pods does it again.
		settled(before, 3*len(mcs))
		Expect(op.requests.Writes()).To(BeEmpty())
	})
})
