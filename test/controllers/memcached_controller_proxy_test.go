package controllers_test

import (
	"fmt"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
	"github.com/example-inc/memcached-operator/api/v1/gen"
)

// proxyVars is what proxyenv.FromEnvironment yields when OLM injected the
// three variables: each in upper and lower case.
func proxyVars(httpProxy, httpsProxy, noProxy string) []corev1.EnvVar {
	var out []corev1.EnvVar
	for _, kv := range [][2]string{{"HTTP_PROXY", httpProxy}, {"HTTPS_PROXY", httpsProxy}, {"NO_PROXY", noProxy}} {
		if kv[1] != "" {
			out = append(out, corev1.EnvVar{Name: kv[0], Value: kv[1]}, corev1.EnvVar{Name: strings.ToLower(kv[0]), Value: kv[1]})
		}
	}
	return out
}

// restartOperator stops the suite's operator and starts one with proxy; the
// suite's operator (no proxy) comes back when the spec ends.
func restartOperator(proxy []corev1.EnvVar, tweaks ...func(*ctrl.Options)) {
	GinkgoHelper()
	op.stop()
	opts := suiteOptions()
	opts.ProxyEnv = proxy
	op = startOperator(opts, tweaks...)
}

// refuseDeployment makes the API server refuse every write of a Deployment
// named name, until the spec ends.
func refuseDeployment(name string) {
	GinkgoHelper()
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "refuse-" + name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionregistrationv1.Fail),
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
					Rule:       admissionregistrationv1.Rule{APIGroups: []string{"apps"}, APIVersions: []string{"v1"}, Resources: []string{"deployments"}},
				},
			}}},
			Validations: []admissionregistrationv1.Validation{{
				Expression: fmt.Sprintf("object.metadata.name != %q", name),
				Message:    "this cluster refuses Deployments named " + name,
			}},
		},
	}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: policy.Name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        policy.Name,
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
		},
	}
	for _, obj := range []client.Object{policy, binding} {
		Expect(k8s.Create(ctx, obj)).To(Succeed())
		DeferCleanup(func() { Expect(k8s.Delete(ctx, obj)).To(Succeed()) })
	}
	// The API server loads a policy asynchronously: wait until it refuses.
	Eventually(func() error {
		return k8s.Create(ctx, gen.UnrelatedDeployment(watchedNS, name, 1), client.DryRunAll)
	}, timeout, interval).Should(MatchError(ContainSubstring("denied request")))
}

// proxyEnvOf returns the proxy entries of every container of mc's Deployment.
func proxyEnvOf(g Gomega, mc *cachev1.Memcached) [][]corev1.EnvVar {
	d := &appsv1.Deployment{}
	g.Expect(k8s.Get(ctx, key(mc), d)).To(Succeed())
	var out [][]corev1.EnvVar
	for _, c := range append(d.Spec.Template.Spec.InitContainers, d.Spec.Template.Spec.Containers...) {
		var env []corev1.EnvVar
		for _, e := range c.Env {
			if strings.HasSuffix(strings.ToUpper(e.Name), "_PROXY") {
				env = append(env, e)
			}
		}
		out = append(out, env)
	}
	return out
}

func replicaSetsOf(mc *cachev1.Memcached) int {
	GinkgoHelper()
	rs := &appsv1.ReplicaSetList{}
	Expect(k8s.List(ctx, rs, client.InNamespace(mc.Namespace), client.MatchingLabels{"app.kubernetes.io/instance": mc.Name})).To(Succeed())
	return len(rs.Items)
}

var _ = Describe("Cluster-wide proxy", Ordered, func() {
	var mcs []*cachev1.Memcached

	BeforeAll(func() {
		DeferCleanup(func() { restartOperator(nil) })
		restartOperator(proxyVars("http://proxy-a:3128", "http://proxy-a:3129", ".svc,.cluster.local"))
		for range 2 {
			mc := gen.Memcached(watchedNS, "proxy-"+strings.ToLower(string(rune('a'+len(mcs)))), gen.WithSize(2))
			Expect(k8s.Create(ctx, mc)).To(Succeed())
			DeferCleanup(func() { Expect(client.IgnoreNotFound(k8s.Delete(ctx, mc))).To(Succeed()) })
			mcs = append(mcs, mc)
		}
		for _, mc := range mcs {
			eventuallyAvailable(mc, 2)
		}
	})

	It("puts the three variables, upper and lower case, into every container of every Deployment", func() {
		for _, mc := range mcs {
			Eventually(func(g Gomega) {
				for _, env := range proxyEnvOf(g, mc) {
					g.Expect(env).To(ConsistOf(proxyVars("http://proxy-a:3128", "http://proxy-a:3129", ".svc,.cluster.local")))
				}
			}, timeout, interval).Should(Succeed())
		}
	})

	It("rolls each Deployment out once when the operator restarts with other values, keeping other env", func() {
		before := map[string]int{}
		for _, mc := range mcs {
			d := &appsv1.Deployment{}
			Expect(k8s.Get(ctx, key(mc), d)).To(Succeed())
			// Someone else's variable must survive every change below.
			patch := client.MergeFrom(d.DeepCopy())
			d.Spec.Template.Spec.Containers[0].Env = append(d.Spec.Template.Spec.Containers[0].Env, corev1.EnvVar{Name: "TZ", Value: "UTC"})
			Expect(k8s.Patch(ctx, d, patch, client.FieldOwner("team-edit"))).To(Succeed())
			eventuallyAvailable(mc, 2)
			Eventually(func(g Gomega) {
				g.Expect(k8s.Get(ctx, key(mc), d)).To(Succeed())
				g.Expect(d.Status.ObservedGeneration).To(Equal(d.Generation))
			}, timeout, interval).Should(Succeed())
			before[mc.Name] = replicaSetsOf(mc)
		}

		changed := proxyVars("http://proxy-b:3128", "", ".svc")
		restartOperator(changed)
		for _, mc := range mcs {
			Eventually(func(g Gomega) {
				for _, env := range proxyEnvOf(g, mc) {
					g.Expect(env).To(ConsistOf(changed))
				}
			}, timeout, interval).Should(Succeed())
			eventuallyAvailable(mc, 2)
			// The Deployment controller creates the new ReplicaSet a moment
			// after the Deployment changes; a second one would show as +2.
			Eventually(func() int { return replicaSetsOf(mc) }, timeout, interval).Should(Equal(before[mc.Name]+1),
				"one new pod template for %s", mc.Name)
			d := &appsv1.Deployment{}
			Expect(k8s.Get(ctx, key(mc), d)).To(Succeed())
			Expect(d.Spec.Template.Spec.Containers[0].Env).To(ContainElement(corev1.EnvVar{Name: "TZ", Value: "UTC"}))
		}

		restartOperator(nil)
		for _, mc := range mcs {
			Eventually(func(g Gomega) {
				for _, env := range proxyEnvOf(g, mc) {
					g.Expect(env).To(BeEmpty())
				}
			}, timeout, interval).Should(Succeed())
			d := &appsv1.Deployment{}
			Expect(k8s.Get(ctx, key(mc), d)).To(Succeed())
			Expect(d.Spec.Template.Spec.Containers[0].Env).To(Equal([]corev1.EnvVar{{Name: "TZ", Value: "UTC"}}))
			eventuallyAvailable(mc, 2)
			Eventually(func() int { return replicaSetsOf(mc) }, timeout, interval).Should(Equal(before[mc.Name] + 2))
		}
	})

	It("never writes proxy credentials to its log, events or status", func() {
		const secret = "s3cr3t-pw"
		logs := gbytes.NewBuffer()
		restartOperator(proxyVars("http://alice:"+secret+"@proxy:3128", "https://alice:"+secret+"@proxy:3129", ".svc"),
			func(o *ctrl.Options) { o.Logger = zap.New(zap.WriteTo(logs), zap.UseDevMode(true)) })

		for _, mc := range mcs {
			Eventually(func(g Gomega) {
				for _, env := range proxyEnvOf(g, mc) {
					g.Expect(env).To(ContainElement(HaveField("Value", ContainSubstring(secret))))
				}
			}, timeout, interval).Should(Succeed())
		}
		// A Memcached whose Deployment the API server refuses (an admission
		// policy, as a cluster's policy engine would) makes the operator log,
		// record and report its error: the likeliest place for a value to
		// leak.
		broken := gen.Memcached(watchedNS, "proxy-broken", gen.WithSize(2))
		refuseDeployment(broken.Name)
		Expect(k8s.Create(ctx, broken)).To(Succeed())
		DeferCleanup(func() { Expect(k8s.Delete(ctx, broken)).To(Succeed()) })
		Eventually(func(g Gomega) {
			got := &cachev1.Memcached{}
			g.Expect(k8s.Get(ctx, key(broken), got)).To(Succeed())
			g.Expect(meta.FindStatusCondition(got.Status.Conditions, cachev1.ConditionDegraded)).To(And(
				HaveField("Status", metav1.ConditionTrue), HaveField("Reason", cachev1.ReasonReconcileFailed),
				HaveField("Message", ContainSubstring("denied request"))))
		}, timeout, interval).Should(Succeed())

		Expect(string(logs.Contents())).To(ContainSubstring(broken.Name), "the log was captured")
		Expect(string(logs.Contents())).NotTo(ContainSubstring(secret))

		events := &eventsv1.EventList{}
		Expect(k8s.List(ctx, events, client.InNamespace(watchedNS))).To(Succeed())
		Expect(events.Items).NotTo(BeEmpty())
		for _, e := range events.Items {
			Expect(e.Note).NotTo(ContainSubstring(secret))
		}
		for _, mc := range append(mcs, broken) {
			got := &cachev1.Memcached{}
			Expect(k8s.Get(ctx, key(mc), got)).To(Succeed())
			Expect(fmt.Sprintf("%+v", got.Status)).NotTo(ContainSubstring(secret))
		}
	})
})
