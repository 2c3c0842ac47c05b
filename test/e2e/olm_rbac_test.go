package e2e

import (
	"context"
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// access is one request the manager makes; name is the object's, for a
// rule that names its objects.
type access struct {
	verb, group, resource, subresource, name string
}

func (a access) String() string {
	r := a.resource
	if a.subresource != "" {
		r += "/" + a.subresource
	}
	if a.group != "" {
		r += "." + a.group
	}
	if a.name != "" {
		r += " " + a.name
	}
	return a.verb + " " + r
}

// managerAccess is what the manager does in a namespace it watches: read
// Memcached objects and patch their status, apply its Deployments, Services
// and PDBs (and delete a PDB when a Memcached shrinks to one pod), read pods,
// and record events.
var managerAccess = []access{
	{verb: "list", group: "cache.example.com", resource: "memcacheds"},
	{verb: "watch", group: "cache.example.com", resource: "memcacheds"},
	{verb: "patch", group: "cache.example.com", resource: "memcacheds", subresource: "status"},
	{verb: "create", group: "apps", resource: "deployments"},
	{verb: "patch", group: "apps", resource: "deployments"},
	{verb: "patch", resource: "services"},
	{verb: "delete", group: "policy", resource: "poddisruptionbudgets"},
	{verb: "watch", resource: "pods"},
	{verb: "create", group: "events.k8s.io", resource: "events"},
}

// ownNamespaceAccess is what the manager does in its own namespace only:
// lead (the Lease and its event), keep its pods' NetworkPolicies
// (controllers/ingresspolicy) and, only under OLM, make its Deployment
// an owner of OLM's webhook certificate Secret (certs.KeepOLMSecret: the
// pod's ReplicaSet, then the Secret) and read its Subscription at start
// (cmd/manager/app/subscription_config.go).
var ownNamespaceAccess = []access{
	{verb: "update", group: "coordination.k8s.io", resource: "leases"},
	{verb: "create", resource: "events"},
	{verb: "watch", group: "networking.k8s.io", resource: "networkpolicies"},
	{verb: "patch", group: "networking.k8s.io", resource: "networkpolicies"},
	{verb: "get", resource: "secrets", name: webhookService + "-cert"},
	{verb: "patch", resource: "secrets", name: webhookService + "-cert"},
	{verb: "get", group: "apps", resource: "replicasets"},
	{verb: "list", group: "operators.coreos.com", resource: "subscriptions"},
}

// otherSecret is a Secret the manager may read nowhere, its own namespace
// included.
var otherSecret = access{verb: "get", resource: "secrets", name: "someone-elses"}

// clusterAccess is what the manager does cluster-wide: check the callers of
// its metrics endpoint, and read the cluster's TLS security profile, which
// lives in a cluster-scoped object.
var clusterAccess = []access{
	{verb: "create", group: "authentication.k8s.io", resource: "tokenreviews"},
	{verb: "create", group: "authorization.k8s.io", resource: "subjectaccessreviews"},
	{verb: "get", group: "config.openshift.io", resource: "apiservers"},
	{verb: "watch", group: "config.openshift.io", resource: "apiservers"},
}

// clusterRule is each rule the manager may hold cluster-wide: the metrics
// reviews, and the read of the APIServer object.
var clusterRule = Or(
	And(HaveField("Verbs", Equal([]string{"create"})),
		HaveField("Resources", HaveEach(BeElementOf("tokenreviews", "subjectaccessreviews")))),
	And(HaveField("APIGroups", Equal([]string{"config.openshift.io"})),
		HaveField("Resources", Equal([]string{"apiservers"})),
		HaveField("Verbs", Equal([]string{"get", "list", "watch"}))))

// serviceAccount is the manager's ServiceAccount in the install's namespace.
type serviceAccount struct{ namespace, name string }

func (in install) serviceAccount() serviceAccount {
	return serviceAccount{namespace: in.namespace, name: serviceAccountName}
}

// can asks the API server's authorizer whether sa may make request a in
// namespace ("" for every namespace, or for a cluster-scoped resource).
func can(ctx context.Context, sa serviceAccount, a access, namespace string) bool {
	GinkgoHelper()
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		// How the API server names a ServiceAccount's token.
		User:   "system:serviceaccount:" + sa.namespace + ":" + sa.name,
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + sa.namespace, "system:authenticated"},
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Namespace: namespace, Verb: a.verb, Group: a.group, Resource: a.resource, Subresource: a.subresource, Name: a.name,
		},
	}}
	Expect(k8s.Create(ctx, sar)).To(Succeed())
	return sar.Status.Allowed
}

// clusterRules are the rules of every ClusterRole bound to sa by a
// ClusterRoleBinding: what it may do cluster-wide.
func clusterRules(ctx context.Context, sa serviceAccount) []rbacv1.PolicyRule {
	GinkgoHelper()
	var bindings rbacv1.ClusterRoleBindingList
	Expect(k8s.List(ctx, &bindings)).To(Succeed())
	var rules []rbacv1.PolicyRule
	for _, b := range bindings.Items {
		for _, s := range b.Subjects {
			if s.Kind != rbacv1.ServiceAccountKind || s.Namespace != sa.namespace || s.Name != sa.name {
				continue
			}
			Expect(b.RoleRef.Kind).To(Equal("ClusterRole"), "binding %s", b.Name)
			role := &rbacv1.ClusterRole{}
			Expect(k8s.Get(ctx, client.ObjectKey{Name: b.RoleRef.Name}, role)).To(Succeed(), fmt.Sprintf("ClusterRole %s", b.RoleRef.Name))
			rules = append(rules, role.Rules...)
		}
	}
	return rules
}

// expectOwnNamespaceRulesThereOnly checks that the install's
// ServiceAccount holds ownNamespaceAccess in the install's namespace, where
// OLM created the bundle's Roles, and in none of elsewhere, nor
// cluster-wide: not in the target namespaces, where OLM copies the CSV's
// permissions, and not in AllNamespaces mode, where it lifts them to
// ClusterRoles.
func expectOwnNamespaceRulesThereOnly(ctx context.Context, in install, elsewhere []string) {
	GinkgoHelper()
	sa := in.serviceAccount()
	for _, a := range ownNamespaceAccess {
		Expect(can(ctx, sa, a, in.namespace)).To(BeTrue(), "%s: %s in its own namespace", in, a)
		for _, ns := range append(elsewhere, metav1.NamespaceAll) {
			Expect(can(ctx, sa, a, ns)).To(BeFalse(), "%s: %s in namespace %q", in, a, ns)
		}
	}
	Expect(can(ctx, sa, otherSecret, in.namespace)).To(BeFalse(), "%s: %s in its own namespace", in, otherSecret)
}
