package e2e

import (
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
	"github.com/example-inc/memcached-operator/api/v1/gen"
	"github.com/example-inc/memcached-operator/webhooks"
)

// The namespaced installs, side by side on one cluster: two OwnNamespace
// installs (two teams, one operator each), a SingleNamespace and a
// MultiNamespace one. Their namespaces do not overlap, which is what OLM
// asks of installs that provide the same API.
var (
	ownA   = install{namespace: "team-a", targets: []string{"team-a"}}
	ownB   = install{namespace: "team-b", targets: []string{"team-b"}}
	single = install{namespace: "single-operator", targets: []string{"single-apps"}}
	multi  = install{namespace: "multi-operator", targets: []string{"multi-a", "multi-b"}}

	namespacedInstallList = []install{ownA, ownB, single, multi}
)

// unwatchedNamespace is targeted by no install.
const unwatchedNamespace = "unwatched"

// othersTargets are the namespaces that in may not touch: every other
// install's targets and unwatchedNamespace.
func othersTargets(in install) []string {
	out := []string{unwatchedNamespace}
	for _, other := range namespacedInstallList {
		if other.namespace != in.namespace {
			out = append(out, other.targets...)
		}
	}
	return out
}

// targetsBeyond are in's targets other than its own namespace: where OLM
// grants the CSV's permissions but not the bundle's Role.
func targetsBeyond(in install) []string {
	var out []string
	for _, ns := range in.targets {
		if ns != in.namespace {
			out = append(out, ns)
		}
	}
	return out
}

// namespacedInstalls install toVersion with toImage: the catalog serves both
// versions since the upgrade, so a new Subscription installs the channel's
// head.
func namespacedInstalls() {
	It("installs all four at once: every CSV succeeds and each operator watches exactly its OperatorGroup's namespaces", func(ctx SpecContext) {
		Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: unwatchedNamespace}})).To(Succeed())
		start := time.Now()
		for _, in := range namespacedInstallList {
			in.subscribe(ctx)
		}
		for _, in := range namespacedInstallList {
			in.expectInstalled(ctx, toVersion)
		}
		GinkgoWriter.Printf("%d namespaced installs Succeeded %s after their Subscriptions were created\n",
			len(namespacedInstallList), time.Since(start).Round(time.Millisecond))

		for _, in := range namespacedInstallList {
			By(in.String())
			og := in.operatorGroup(ctx)
			Expect(og.Status.Namespaces).To(ConsistOf(in.watched()))
			d := in.deployment(ctx)
			Expect(d.Spec.Template.Annotations).To(HaveKey("olm.targetNamespaces"))
			Expect(strings.Split(d.Spec.Template.Annotations["olm.targetNamespaces"], ",")).To(ConsistOf(in.targets))
			env := processEnv(ctx, in.operatorPod(ctx, toImage))
			Expect(strings.Split(env["WATCH_NAMESPACE"], ",")).To(ConsistOf(in.targets), "%s: the manager's WATCH_NAMESPACE", in)
		}
	}, SpecTimeout(5*time.Minute))

	It("calls each install's webhooks for its OperatorGroup's namespaces only", func(ctx SpecContext) {
		namespaceLabels := func(name string) labels.Set {
			ns := &corev1.Namespace{}
			Expect(k8s.Get(ctx, client.ObjectKey{Name: name}, ns)).To(Succeed())
			return ns.Labels
		}
		for _, in := range namespacedInstallList {
			hooks, err := csvWebhooks(ctx, in, toVersion)
			Expect(err).NotTo(HaveOccurred())
			selectors := namespaceSelectors(hooks)
			csv := &operatorsv1alpha1.ClusterServiceVersion{}
			Expect(k8s.Get(ctx, client.ObjectKey{Namespace: in.namespace, Name: csvName(toVersion)}, csv)).To(Succeed())
			Expect(selectors).To(HaveLen(len(csv.Spec.WebhookDefinitions)), "%s: one webhook per webhookdefinition", in)
			for name, ls := range selectors {
				sel, err := metav1.LabelSelectorAsSelector(ls)
				Expect(err).NotTo(HaveOccurred())
				for _, ns := range in.targets {
					Expect(sel.Matches(namespaceLabels(ns))).To(BeTrue(), "%s: webhook %s skips its target %s", in, name, ns)
				}
				for _, ns := range othersTargets(in) {
					Expect(sel.Matches(namespaceLabels(ns))).To(BeFalse(), "%s: webhook %s is called for %s", in, name, ns)
				}
			}
		}
	})

	It("grants each install the manager's rules in its own namespaces only, and cluster-wide nothing but the metrics reviews and the TLS profile", func(ctx SpecContext) {
		for _, in := range namespacedInstallList {
			By(in.String())
			sa := in.serviceAccount()
			for _, a := range managerAccess {
				for _, ns := range in.targets {
					Expect(can(ctx, sa, a, ns)).To(BeTrue(), "%s: %s in its target %s", in, a, ns)
				}
				for _, ns := range othersTargets(in) {
					Expect(can(ctx, sa, a, ns)).To(BeFalse(), "%s: %s in %s", in, a, ns)
				}
				Expect(can(ctx, sa, a, metav1.NamespaceAll)).To(BeFalse(), "%s: %s in every namespace", in, a)
			}
			for _, a := range clusterAccess {
				Expect(can(ctx, sa, a, "")).To(BeTrue(), "%s: %s", in, a)
			}
			for _, r := range clusterRules(ctx, sa) {
				Expect(r).To(clusterRule, "%s: cluster-wide rule %+v", in, r)
			}
			expectOwnNamespaceRulesThereOnly(ctx, in, append(targetsBeyond(in), othersTargets(in)...))
		}
	})

	It("keeps each install's OLM certificate Secret and installs its NetworkPolicies, with what reaches its own namespace only", func(ctx SpecContext) {
		for _, in := range namespacedInstallList {
			expectSecretKept(ctx, in)
			expectNetworkPolicies(ctx, in.String(), in.operatorPod(ctx, toImage), append(targetsBeyond(in), unwatchedNamespace))
		}
	})

	It("defaults, refuses and reconciles Memcached objects in every watched namespace, each through its own install", func(ctx SpecContext) {
		var made []*cachev1.Memcached
		for _, in := range namespacedInstallList {
			for _, ns := range in.targets {
				expectTooBigRefused(ctx, ns, "too-big")
				By("a Memcached without a size in " + ns + " is defaulted by the mutating webhook (dry run)")
				dry := gen.Memcached(ns, "no-size")
				Expect(k8s.Create(ctx, dry, client.DryRunAll)).To(Succeed())
				Expect(dry.Spec.Size).To(HaveValue(Equal(webhooks.DefaultSizePolicy().Default)))

				mc := gen.Memcached(ns, "cache", gen.WithSize(1))
				Expect(k8s.Create(ctx, mc)).To(Succeed())
				made = append(made, mc)
			}
		}
		for _, mc := range made {
			expectReconciledWithProxy(ctx, mc, 1)
		}
	}, SpecTimeout(5*time.Minute))

	It("leaves a Memcached in a namespace no install watches alone, while the CRD's schema still refuses what memcached cannot run", func(ctx SpecContext) {
		By("no webhook is called there: a size above the maximum is admitted, a missing size stays missing")
		tooBig := gen.Memcached(unwatchedNamespace, "too-big", gen.WithSize(webhooks.DefaultSizePolicy().Max+1))
		Expect(k8s.Create(ctx, tooBig)).To(Succeed())
		noSize := gen.Memcached(unwatchedNamespace, "no-size")
		Expect(k8s.Create(ctx, noSize)).To(Succeed())
		Expect(noSize.Spec.Size).To(BeNil(), "not defaulted")
		Expect(noSize.Spec.Memory).To(HaveValue(Equal(resource.MustParse("64Mi"))), "the schema's defaults hold")

		By("the schema's rules hold everywhere: memory that is not a whole MiB is refused with its field path")
		err := k8s.Create(ctx, gen.Memcached(unwatchedNamespace, "bad-memory", gen.WithMemory("1536Ki")))
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
		Expect(err).To(MatchError(ContainSubstring("spec.memory")))

		By("after a later Memcached in a watched namespace is reconciled, nothing exists for the unwatched ones")
		later := gen.Memcached(ownA.namespace, "after-unwatched", gen.WithSize(1))
		Expect(k8s.Create(ctx, later)).To(Succeed())
		expectReconciledWithProxy(ctx, later, 1)
		Consistently(func(g Gomega) {
			var deployments appsv1.DeploymentList
			g.Expect(k8s.List(ctx, &deployments, client.InNamespace(unwatchedNamespace))).To(Succeed())
			g.Expect(deployments.Items).To(BeEmpty())
			var services corev1.ServiceList
			g.Expect(k8s.List(ctx, &services, client.InNamespace(unwatchedNamespace))).To(Succeed())
			g.Expect(services.Items).To(BeEmpty())
			var pdbs policyv1.PodDisruptionBudgetList
			g.Expect(k8s.List(ctx, &pdbs, client.InNamespace(unwatchedNamespace))).To(Succeed())
			g.Expect(pdbs.Items).To(BeEmpty())
			for _, mc := range []*cachev1.Memcached{tooBig, noSize} {
				got := &cachev1.Memcached{}
				g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(mc), got)).To(Succeed())
				g.Expect(got.Status).To(BeZero(), "%s has a status", mc.Name)
			}
		}).WithContext(ctx).WithTimeout(3 * time.Second).WithPolling(500 * time.Millisecond).Should(Succeed())
	}, SpecTimeout(3*time.Minute))

	It("refuses a fifth install whose namespaces overlap another's, with OLM's reason, and the first keeps working", func(ctx SpecContext) {
		overlap := install{namespace: "overlap-operator", targets: []string{ownA.namespace}}
		overlap.subscribe(ctx)
		Eventually(func(g Gomega) {
			csv := &operatorsv1alpha1.ClusterServiceVersion{}
			g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: overlap.namespace, Name: csvName(toVersion)}, csv)).To(Succeed())
			g.Expect(csv.Status.Phase).To(Equal(operatorsv1alpha1.CSVPhaseFailed))
			g.Expect(csv.Status.Reason).To(Equal(operatorsv1alpha1.CSVReasonInterOperatorGroupOwnerConflict))
			g.Expect(csv.Status.Message).To(Equal("intersecting operatorgroups provide the same apis"))
			err := k8s.Get(ctx, client.ObjectKey{Namespace: overlap.namespace, Name: deploymentName}, &appsv1.Deployment{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "no operator runs for it (err %v)", err)
		}).WithContext(ctx).WithTimeout(3 * time.Minute).WithPolling(250 * time.Millisecond).Should(Succeed())

		ownA.expectInstalled(ctx, toVersion)
		mc := gen.Memcached(ownA.namespace, "after-overlap", gen.WithSize(1))
		Expect(k8s.Create(ctx, mc)).To(Succeed())
		expectReconciledWithProxy(ctx, mc, 1)
	}, SpecTimeout(4*time.Minute))
}
