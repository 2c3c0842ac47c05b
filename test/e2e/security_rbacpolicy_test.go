package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/example-inc/memcached-operator/api/v1/gen"
	"github.com/example-inc/memcached-operator/hack/repo"
	"github.com/example-inc/memcached-operator/test/framework/harness"
	"github.com/example-inc/memcached-operator/test/framework/manifest"
)

// problems lists the problems of findings, in order.
func problems(fs []Finding) []Problem {
	out := make([]Problem, 0, len(fs))
	for _, f := range fs {
		out = append(out, f.Problem)
	}
	return out
}

// TestCheckRules proves the checker: each kind of bad grant is flagged, and
// the grants the operator really makes are not.
func TestCheckRules(t *testing.T) {
	rule := func(groups, resources, verbs []string) rbacv1.PolicyRule {
		return rbacv1.PolicyRule{APIGroups: groups, Resources: resources, Verbs: verbs}
	}
	named := func(r rbacv1.PolicyRule, names ...string) rbacv1.PolicyRule {
		r.ResourceNames = names
		return r
	}
	core, apps := []string{""}, []string{"apps"}
	tests := []struct {
		name string
		rule rbacv1.PolicyRule
		want []Problem
	}{
		{"deployments, as the operator writes them", rule(apps, []string{"deployments"}, []string{"get", "list", "watch", "create", "patch"}), nil},
		{"leases for leader election", rule([]string{"coordination.k8s.io"}, []string{"leases"}, []string{"get", "create", "update"}), nil},
		{"token reviews for metrics authentication", rule([]string{"authentication.k8s.io"}, []string{"tokenreviews"}, []string{"create"}), nil},
		{"metrics reader URL", rbacv1.PolicyRule{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}, nil},
		{"configmaps are not secrets", rule(core, []string{"configmaps"}, []string{"get"}), nil},
		{"secrets of another group are not Secrets", rule([]string{"example.com"}, []string{"secrets"}, []string{"get"}), nil},

		{"wildcard verb", rule(apps, []string{"deployments"}, []string{"*"}), []Problem{WildcardVerb}},
		{"wildcard resource", rule(apps, []string{"*"}, []string{"get"}), []Problem{WildcardResource}},
		{"wildcard subresource", rule(apps, []string{"deployments/*"}, []string{"get"}), []Problem{WildcardResource}},
		{"wildcard resource of any kind's subresource", rule(apps, []string{"*/scale"}, []string{"patch"}), []Problem{WildcardResource}},
		{"wildcard API group", rule([]string{"*"}, []string{"deployments"}, []string{"get"}), []Problem{WildcardAPIGroup}},
		{"wildcard URL", rbacv1.PolicyRule{NonResourceURLs: []string{"/metrics*"}, Verbs: []string{"get"}}, []Problem{WildcardURL}},
		{"get and patch OLM's certificate Secret, by name", named(rule(core, []string{"secrets"}, []string{"get", "patch"}), ownCertificateSecret), nil},
		{"list OLM's certificate Secret", named(rule(core, []string{"secrets"}, []string{"get", "list"}), ownCertificateSecret), []Problem{SecretAccess}},
		{"get another Secret by name", named(rule(core, []string{"secrets"}, []string{"get"}), "db-password"), []Problem{SecretAccess}},
		{"read secrets", rule(core, []string{"secrets"}, []string{"get", "list"}), []Problem{SecretAccess}},
		{"watch secrets among other resources", rule(core, []string{"pods", "secrets"}, []string{"watch"}), []Problem{SecretAccess}},
		{"every core resource includes secrets", rule(core, []string{"*"}, []string{"get"}), []Problem{WildcardResource, SecretAccess}},
		{"secrets in any group", rule([]string{"*"}, []string{"secrets"}, []string{"get"}), []Problem{WildcardAPIGroup, SecretAccess}},
		{"cluster admin", rule([]string{"*"}, []string{"*"}, []string{"*"}), []Problem{WildcardVerb, WildcardAPIGroup, WildcardResource, SecretAccess}},
		{"escalate", rule([]string{"rbac.authorization.k8s.io"}, []string{"clusterroles"}, []string{"escalate"}), []Problem{EscalationVerb}},
		{"bind", rule([]string{"rbac.authorization.k8s.io"}, []string{"roles"}, []string{"bind"}), []Problem{EscalationVerb}},
		{"impersonate", rule(core, []string{"serviceaccounts"}, []string{"impersonate"}), []Problem{EscalationVerb}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := CheckRules("test role", []rbacv1.PolicyRule{tt.rule})
			if !slices.Equal(problems(got), tt.want) {
				t.Errorf("CheckRules(%+v) = %v, want problems %v", tt.rule, got, tt.want)
			}
		})
	}
}

// TestCheckFlagsBadRoleManifest runs a bad Role through the same reading
// path as the generated manifests, so a reader that dropped rules could not
// make the generated RBAC look clean.
func TestCheckFlagsBadRoleManifest(t *testing.T) {
	const roleYAML = `
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: too-much
  namespace: system
rules:
- apiGroups: ["apps"]
  resources: ["deployments"]
  verbs: ["get", "list"]
- apiGroups: [""]
  resources: ["secrets"]
  verbs: ["*"]
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: not-a-role
`
	roles, err := rolesIn("inline", []byte(roleYAML))
	if err != nil {
		t.Fatal(err)
	}
	if len(roles) != 1 || roles[0].name != "inline Role too-much" {
		t.Fatalf("read roles %+v, want the one Role", roles)
	}
	got := CheckRules(roles[0].name, roles[0].rules)
	want := []Finding{
		{Role: "inline Role too-much", Rule: 1, Problem: WildcardVerb},
		{Role: "inline Role too-much", Rule: 1, Problem: SecretAccess},
	}
	for i := range got {
		got[i].Detail = "" // quotes the rule, for people
	}
	if !slices.Equal(got, want) {
		t.Errorf("findings %v, want %v", got, want)
	}
}

// Problem is one kind of grant the operator's RBAC must not make.
type Problem string

// The problems CheckRules reports.
const (
	// A wildcard grants whatever a later Kubernetes version or CRD adds,
	// which nobody reviewed.
	WildcardVerb     Problem = "wildcard verb"
	WildcardResource Problem = "wildcard resource"
	WildcardAPIGroup Problem = "wildcard API group"
	WildcardURL      Problem = "wildcard non-resource URL"
	// SecretAccess: the operator's serving certificates are files (mounted
	// by cert-manager's Secret volume or by OLM, or made in local mode), and
	// it calls the Secret API for one Secret only: under OLM,
	// certs.KeepOLMSecret gets and patches OLM's webhook certificate Secret,
	// which its pod mounts anyway (ownCertificateRule). Any other grant on
	// secrets is reach it does not use, and a stolen token with it reads
	// every credential in the cluster.
	SecretAccess Problem = "access to secrets"
	// EscalationVerb: escalate, bind and impersonate let the holder grant
	// itself, or act with, permissions it was not given.
	EscalationVerb Problem = "privilege escalation verb"
)

// Finding is one grant of a role that breaks the policy.
type Finding struct {
	// Role says which role and where it is defined, e.g.
	// "config/rbac/role.yaml ClusterRole manager-role".
	Role string
	// Rule is the index of the offending rule in the role.
	Rule    int
	Problem Problem
	// Detail quotes the grant.
	Detail string
}

func (f Finding) String() string {
	return fmt.Sprintf("%s, rule %d: %s (%s)", f.Role, f.Rule, f.Problem, f.Detail)
}

// escalationVerbs are the RBAC verbs that widen the holder's own rights.
var escalationVerbs = []string{"escalate", "bind", "impersonate"}

// CheckRules returns every finding in the rules of one role, in rule order.
// It is pure, so the same policy serves the static manifest test and any
// other caller.
func CheckRules(role string, rules []rbacv1.PolicyRule) []Finding {
	var out []Finding
	for i, r := range rules {
		add := func(p Problem, detail string) {
			out = append(out, Finding{Role: role, Rule: i, Problem: p, Detail: detail})
		}
		if slices.Contains(r.Verbs, rbacv1.VerbAll) {
			add(WildcardVerb, fmt.Sprintf("verbs %v on %v", r.Verbs, r.Resources))
		}
		if slices.Contains(r.APIGroups, rbacv1.APIGroupAll) {
			add(WildcardAPIGroup, fmt.Sprintf("apiGroups %v", r.APIGroups))
		}
		if slices.ContainsFunc(r.Resources, isWildcardResource) {
			add(WildcardResource, fmt.Sprintf("resources %v", r.Resources))
		}
		if slices.ContainsFunc(r.NonResourceURLs, func(u string) bool { return strings.HasSuffix(u, "*") }) {
			add(WildcardURL, fmt.Sprintf("nonResourceURLs %v", r.NonResourceURLs))
		}
		if coversCoreGroup(r.APIGroups) && slices.ContainsFunc(r.Resources, coversSecrets) && !ownCertificateRule(r) {
			add(SecretAccess, fmt.Sprintf("verbs %v on %v in apiGroups %q", r.Verbs, r.Resources, r.APIGroups))
		}
		for _, v := range escalationVerbs {
			if slices.Contains(r.Verbs, v) {
				add(EscalationVerb, fmt.Sprintf("verb %q on %v", v, r.Resources))
			}
		}
	}
	return out
}

// ownCertificateSecret is OLM's webhook certificate Secret for the
// operator's Deployment: <deployment>-service-cert.
const ownCertificateSecret = "memcached-operator-controller-manager-service-cert"

// ownCertificateRule is the one grant on secrets the operator may hold: get
// and patch on ownCertificateSecret, by name. (list and watch ignore
// resourceNames' limit to one name in what they return, so they stay out.)
func ownCertificateRule(r rbacv1.PolicyRule) bool {
	return slices.Equal(r.APIGroups, []string{""}) && slices.Equal(r.Resources, []string{"secrets"}) &&
		slices.Equal(r.ResourceNames, []string{ownCertificateSecret}) &&
		!slices.ContainsFunc(r.Verbs, func(v string) bool { return v != "get" && v != "patch" })
}

// isWildcardResource matches "*" and the subresource forms "*/scale" and
// "pods/*".
func isWildcardResource(r string) bool {
	return r == rbacv1.ResourceAll || strings.HasPrefix(r, "*/") || strings.HasSuffix(r, "/*")
}

// coversCoreGroup: Secrets live in the core ("") group.
func coversCoreGroup(groups []string) bool {
	return slices.Contains(groups, "") || slices.Contains(groups, rbacv1.APIGroupAll)
}

// coversSecrets matches secrets, its subresources, and wildcards that
// include it.
func coversSecrets(r string) bool {
	return r == "secrets" || strings.HasPrefix(r, "secrets/") || r == rbacv1.ResourceAll || strings.HasPrefix(r, "*/")
}

// TestGeneratedRBAC holds every role the project ships (config/rbac, the
// Roles and ClusterRoles in bundle/manifests and the CSV's permission sets)
// to the policy of CheckRules.
func TestGeneratedRBAC(t *testing.T) {
	var roles []role
	for _, dir := range []string{configRBACDir, filepath.Join(configRBACDir, "leader-election"), filepath.Join(configRBACDir, "network-policy"), bundleManifestDir} {
		rs, err := rolesInDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		roles = append(roles, rs...)
	}
	b, err := manifest.Bundle()
	if err != nil {
		t.Fatal(err)
	}
	roles = append(roles, csvRoles(b.CSV)...)

	// The roles the operator runs with must be among those read, or a
	// renamed file would make this test pass on nothing.
	names := make([]string, 0, len(roles))
	for _, r := range roles {
		names = append(names, r.name)
	}
	for _, want := range []string{
		"config/rbac/role.yaml ClusterRole manager-role",
		"config/rbac/leader-election/leader_election_role.yaml Role leader-election-role",
		"bundle/manifests/memcached-operator-leader-election-role_rbac.authorization.k8s.io_v1_role.yaml Role memcached-operator-leader-election-role",
		"config/rbac/network-policy/network_policy_role.yaml Role network-policy-role",
		"bundle/manifests/memcached-operator-network-policy-role_rbac.authorization.k8s.io_v1_role.yaml Role memcached-operator-network-policy-role",
		"bundle/manifests/memcached-operator-olm_rbac.authorization.k8s.io_v1_role.yaml Role memcached-operator-olm",
		"config/rbac/metrics_auth_role.yaml ClusterRole metrics-auth-role",
		"config/rbac/metrics_reader_role.yaml ClusterRole metrics-reader",
		"CSV clusterPermissions of " + operatorServiceAccount,
		"CSV permissions of " + operatorServiceAccount,
	} {
		if !slices.Contains(names, want) {
			t.Errorf("did not read %q; read %q", want, names)
		}
	}

	for _, r := range roles {
		for _, f := range CheckRules(r.name, r.rules) {
			t.Errorf("%v", f)
		}
	}
}

// Where the generated manifests are.
var (
	configRBACDir     = filepath.Join(repo.Root(), "config", "rbac")
	configDefaultDir  = filepath.Join(repo.Root(), "config", "default")
	bundleManifestDir = filepath.Join(manifest.BundleDir, "manifests")
)

// Names config/default gives the operator's objects (config/manager and
// config/rbac with its namePrefix and namespace), beside those of
// node_inclusteroperator_test.go.
const (
	operatorServiceAccount = "memcached-operator-controller-manager"
)

// role is the rules of one Role, ClusterRole or CSV permission set, named
// for messages by where it comes from.
type role struct {
	name  string
	rules []rbacv1.PolicyRule
}

// rolesIn returns the Roles and ClusterRoles of a YAML stream; source names
// the stream in the roles' names.
func rolesIn(source string, data []byte) ([]role, error) {
	objs, err := manifest.Decode(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	var out []role
	for _, u := range objs {
		var rules []rbacv1.PolicyRule
		switch u.GroupVersionKind() {
		case rbacv1.SchemeGroupVersion.WithKind("Role"):
			var r rbacv1.Role
			if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(u.Object, &r, true); err != nil {
				return nil, fmt.Errorf("%s: Role %s: %w", source, u.GetName(), err)
			}
			rules = r.Rules
		case rbacv1.SchemeGroupVersion.WithKind("ClusterRole"):
			var r rbacv1.ClusterRole
			if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(u.Object, &r, true); err != nil {
				return nil, fmt.Errorf("%s: ClusterRole %s: %w", source, u.GetName(), err)
			}
			rules = r.Rules
		default:
			continue
		}
		out = append(out, role{name: fmt.Sprintf("%s %s %s", source, u.GetKind(), u.GetName()), rules: rules})
	}
	return out, nil
}

// rolesInDir returns the roles of every YAML file in dir.
func rolesInDir(dir string) ([]role, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no YAML files in %s", dir)
	}
	var out []role
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		rel, _ := filepath.Rel(repo.Root(), f)
		roles, err := rolesIn(rel, data)
		if err != nil {
			return nil, err
		}
		out = append(out, roles...)
	}
	return out, nil
}

// csvRoles are the permission sets the CSV makes OLM grant: clusterPermissions
// become ClusterRoles, permissions namespaced Roles.
func csvRoles(csv *v1alpha1.ClusterServiceVersion) []role {
	var out []role
	spec := csv.Spec.InstallStrategy.StrategySpec
	for _, p := range spec.ClusterPermissions {
		out = append(out, role{name: fmt.Sprintf("CSV clusterPermissions of %s", p.ServiceAccountName), rules: p.Rules})
	}
	for _, p := range spec.Permissions {
		out = append(out, role{name: fmt.Sprintf("CSV permissions of %s", p.ServiceAccountName), rules: p.Rules})
	}
	return out
}

// kustomizeBuild runs `kustomize build dir` and decodes the objects.
func kustomizeBuild(dir string) ([]*unstructured.Unstructured, error) {
	out, err := harness.KustomizeBuild(dir)
	if err != nil {
		return nil, err
	}
	return manifest.Decode(out)
}

// deploymentIn returns the Deployment named name among objs.
func deploymentIn(objs []*unstructured.Unstructured, name string) (*appsv1.Deployment, error) {
	for _, u := range objs {
		if u.GetKind() == "Deployment" && u.GetName() == name {
			d := &appsv1.Deployment{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(u.Object, d, true); err != nil {
				return nil, err
			}
			return d, nil
		}
	}
	return nil, fmt.Errorf("no Deployment %q", name)
}

// leaderElectionID is cmd/manager/app/manager.go's LeaderElectionID.
const leaderElectionID = "memcached-operator.cache.example.com"

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
				sa := serviceAccount{namespace: operatorNamespace, name: operatorServiceAccount}
				// An empty namespace asks about every namespace.
				for _, ns := range []string{"", "default", operatorNamespace} {
					Expect(can(ctx, sa, access{verb: verb, group: group, resource: resource}, ns)).To(Equal(allowed), "namespace %q", ns)
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
