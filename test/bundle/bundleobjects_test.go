package bundle

import (
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/example-inc/memcached-operator/hack/repo"
	"github.com/example-inc/memcached-operator/test/framework/manifest"
)

// The rules the manager needs in its own namespace only, the leader
// election's (config/rbac/leader-election), the NetworkPolicy keeper's
// (config/rbac/network-policy) and those only an OLM install
// uses (certs.KeepOLMSecret, the start-up read of the Subscription), are
// bundle Roles bound to the CSV's ServiceAccount, which OLM creates in the
// install namespace alone. None of them is in the CSV's permissions, which
// OLM also grants in every target namespace (and cluster-wide for
// AllNamespaces: every Lease in the cluster), or its clusterPermissions.
// test/e2e asks the API server's authorizer what each install mode grants.
func TestOwnNamespaceRulesAreBundleRoles(t *testing.T) {
	var leaderElection, networkPolicy rbacv1.Role
	readYAML(t, filepath.Join(repo.Root(), "config", "rbac", "leader-election", "leader_election_role.yaml"), &leaderElection)
	readYAML(t, filepath.Join(repo.Root(), "config", "rbac", "network-policy", "network_policy_role.yaml"), &networkPolicy)
	wantRoles := map[string][]rbacv1.PolicyRule{
		"memcached-operator-leader-election-role": leaderElection.Rules,
		"memcached-operator-network-policy-role":  networkPolicy.Rules,
		"memcached-operator-olm": {
			{APIGroups: []string{""}, Resources: []string{"secrets"}, ResourceNames: []string{manifest.ManagerDeployment + "-service-cert"}, Verbs: []string{"get", "patch"}},
			{APIGroups: []string{"apps"}, Resources: []string{"replicasets"}, Verbs: []string{"get"}},
			{APIGroups: []string{"operators.coreos.com"}, Resources: []string{"subscriptions"}, Verbs: []string{"list"}},
		},
	}

	roles := map[string]rbacv1.Role{}
	var bindings []rbacv1.RoleBinding
	for _, u := range bundleObjects(t) {
		switch u.GetKind() {
		case "Role":
			var r rbacv1.Role
			fromUnstructured(t, u, &r)
			roles[r.Name] = r
		case "RoleBinding":
			var b rbacv1.RoleBinding
			fromUnstructured(t, u, &b)
			bindings = append(bindings, b)
		}
	}
	csv := loadBundle(t).CSV
	// No namespace: OLM creates the binding in the install namespace and
	// copies its subjects as they are; the authorizer reads a ServiceAccount
	// subject without a namespace as the binding's.
	subject := rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: managerServiceAccount(t, csv)}
	strategy := csv.Spec.InstallStrategy.StrategySpec
	for name, want := range wantRoles {
		role, ok := roles[name]
		if !ok {
			t.Errorf("bundle/manifests holds no Role %s", name)
			continue
		}
		if !equality.Semantic.DeepEqual(role.Rules, want) {
			t.Errorf("Role %s rules = %+v, want %+v", name, role.Rules, want)
		}
		i := slices.IndexFunc(bindings, func(b rbacv1.RoleBinding) bool { return b.RoleRef.Kind == "Role" && b.RoleRef.Name == name })
		if i < 0 {
			t.Errorf("no RoleBinding binds Role %s", name)
			continue
		}
		if got := bindings[i].Subjects; !reflect.DeepEqual(got, []rbacv1.Subject{subject}) {
			t.Errorf("RoleBinding %s subjects = %+v, want only %+v", bindings[i].Name, got, subject)
		}
		if role.Namespace != "" || bindings[i].Namespace != "" {
			t.Errorf("Role %s and its RoleBinding have namespaces %q and %q: OLM puts bundle objects in the install namespace",
				name, role.Namespace, bindings[i].Namespace)
		}
		for _, set := range []struct {
			name  string
			perms []v1alpha1.StrategyDeploymentPermissions
		}{{"permissions", strategy.Permissions}, {"clusterPermissions", strategy.ClusterPermissions}} {
			for _, p := range set.perms {
				for _, r := range p.Rules {
					if slices.ContainsFunc(want, func(w rbacv1.PolicyRule) bool { return overlaps(r, w) }) {
						t.Errorf("the CSV's %s grant %+v, a rule of Role %s, in every namespace they reach", set.name, r, name)
					}
				}
			}
		}
	}
}

// overlaps: r grants some of what w grants (a shared group, resource and
// verb).
func overlaps(r, w rbacv1.PolicyRule) bool {
	shares := func(a, b []string) bool {
		return slices.ContainsFunc(a, func(s string) bool { return slices.Contains(b, s) })
	}
	return shares(r.APIGroups, w.APIGroups) && shares(r.Resources, w.Resources) && shares(r.Verbs, w.Verbs)
}

// managerServiceAccount is the ServiceAccount the manager Deployment runs as.
func managerServiceAccount(t *testing.T, csv *v1alpha1.ClusterServiceVersion) string {
	t.Helper()
	sa := managerPod(t, csv).ServiceAccountName
	if sa == "" {
		t.Fatal("the manager Deployment names no ServiceAccount")
	}
	return sa
}

// olderOLMKinds are the kinds of bundle object operator-registry v1.28
// reads (pkg/lib/bundle/supported_resources.go), the registry library of
// operator-sdk v1.31's validator. The list stood until v1.55 added
// NetworkPolicy (OpenShift 4.20; earlier releases only in late z-streams),
// so an OLM older than that refuses any other kind.
var olderOLMKinds = []string{
	"ClusterServiceVersion", "CustomResourceDefinition", "Secret", "ClusterRole", "ClusterRoleBinding",
	"ConfigMap", "ServiceAccount", "Service", "Role", "RoleBinding", "PrometheusRule", "ServiceMonitor",
	"PodDisruptionBudget", "PriorityClass", "VerticalPodAutoscaler", "ConsoleYAMLSample", "ConsoleQuickStart",
	"ConsoleCLIDownload", "ConsoleLink",
}

// The bundle installs on every OpenShift the README names: it holds no
// kind an older OLM refuses. The manager keeps its NetworkPolicies itself
// (controllers/ingresspolicy).
func TestBundleKindsEveryOLMAccepts(t *testing.T) {
	objs := bundleObjects(t)
	if len(objs) == 0 {
		t.Fatal("no bundle objects read")
	}
	for _, u := range objs {
		if !slices.Contains(olderOLMKinds, u.GetKind()) {
			t.Errorf("bundle/manifests holds %s %s, a kind OLM before operator-registry v1.55 refuses", u.GetKind(), u.GetName())
		}
	}
}
