package e2e

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	authorizationv1 "k8s.io/api/authorization/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/example-inc/memcached-operator/api/v1/gen"
)

// leaderElectionID is cmd/manager/app/manager.go's LeaderElectionID.
const leaderElectionID = "memcached-operator.cache.example.com"

// operatorMay asks the API server's authorizer whether the operator's
// ServiceAccount may do verb on resource (in group, in namespace ns).
func operatorMay(ctx context.Context, verb, group, resource, ns string) (bool, error) {
	sar, err := cs.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{
		Spec: authorizationv1.SubjectAccessReviewSpec{
			User:   "system:serviceaccount:" + operatorNamespace + ":" + operatorServiceAccount,
			Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + operatorNamespace, "system:authenticated"},
			ResourceAttributes: &authorizationv1.ResourceAttributes{
				Namespace: ns, Verb: verb, Group: group, Resource: resource,
			},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		return false, err
	}
	return sar.Status.Allowed, nil
}

// theGeneratedRbacSpecs are the "The generated RBAC" specs of the security container (security_test.go).
func theGeneratedRbacSpecs() {
	Describe("The generated RBAC", func() {
		It("is all the operator needs: it leads, reconciles, writes status and records events", func(ctx SpecContext) {
			const ns = "rbac-sufficient"
			Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
			mc := gen.Memcached(ns, "cache", gen.WithSize(2))
			Expect(k8s.Create(ctx, mc)).To(Succeed())

			// The lease and its event: leader-election/leader_election_role.yaml.
			eventually(ctx, func(g Gomega) {
				lease := &coordinationv1.Lease{}
				g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: operatorNamespace, Name: leaderElectionID}, lease)).To(Succeed())
				g.Expect(lease.Spec.HolderIdentity).To(HaveValue(Not(BeEmpty())))
				events := &corev1.EventList{}
				g.Expect(k8s.List(ctx, events, client.InNamespace(operatorNamespace))).To(Succeed())
				g.Expect(events.Items).To(ContainElement(And(
					HaveField("Reason", "LeaderElection"), HaveField("InvolvedObject.Name", leaderElectionID))))
			}).Should(Succeed())

			// Owned objects (apply) and status (patch): role.yaml.
			key := client.ObjectKeyFromObject(mc)
			eventually(ctx, func(g Gomega) {
				g.Expect(k8s.Get(ctx, key, &corev1.Service{})).To(Succeed())
				g.Expect(k8s.Get(ctx, key, &policyv1.PodDisruptionBudget{})).To(Succeed())
				g.Expect(k8s.Get(ctx, key, mc)).To(Succeed())
				g.Expect(mc.Status.ReadyReplicas).To(BeEquivalentTo(2))
			}).Should(Succeed())

			// An event of the reconciler (events.k8s.io, role.yaml): a resize
			// records one.
			Expect(k8s.Patch(ctx, mc, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"size":3}}`)))).To(Succeed())
			eventually(ctx, func(g Gomega) {
				events := &corev1.EventList{}
				g.Expect(k8s.List(ctx, events, client.InNamespace(ns))).To(Succeed())
				g.Expect(events.Items).To(ContainElement(And(
					HaveField("Reason", "Resized"), HaveField("InvolvedObject.Name", "cache"))))
				g.Expect(k8s.Get(ctx, key, mc)).To(Succeed())
				g.Expect(mc.Status.ReadyReplicas).To(BeEquivalentTo(3))
			}).Should(Succeed())

			// And nothing was refused on the way (checked again, over the whole
			// log, when the suite ends).
			Expect(checkOperatorLogs()).To(Succeed())
		}, SpecTimeout(4*readyTimeout))

		DescribeTable("as installed, answers the API server's authorizer",
			func(ctx SpecContext, verb, group, resource string, allowed bool) {
				// An empty namespace asks about every namespace.
				for _, ns := range []string{"", "default", operatorNamespace} {
					Expect(operatorMay(ctx, verb, group, resource, ns)).To(Equal(allowed), "namespace %q", ns)
				}
			},
			// Controls: what the operator does do is allowed.
			Entry("patch deployments: allowed", "patch", "apps", "deployments", true),
			Entry("create tokenreviews: allowed", "create", "authentication.k8s.io", "tokenreviews", true),
			Entry("watch the cluster's APIServer (its TLS profile): allowed", "watch", "config.openshift.io", "apiservers", true),
			Entry("get secrets: denied", "get", "", "secrets", false),
			Entry("list secrets: denied", "list", "", "secrets", false),
			Entry("watch secrets: denied", "watch", "", "secrets", false),
			Entry("delete deployments: denied", "delete", "apps", "deployments", false),
			Entry("escalate clusterroles: denied", "escalate", "rbac.authorization.k8s.io", "clusterroles", false),
			Entry("impersonate users: denied", "impersonate", "", "users", false),
		)
	})
}
