package e2e

import (
	"slices"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
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
	const manifest = `
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
	roles, err := rolesIn("inline", []byte(manifest))
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
	if len(got) != len(want) {
		t.Fatalf("findings %v, want %v", got, want)
	}
	for i := range want {
		if got[i].Role != want[i].Role || got[i].Rule != want[i].Rule || got[i].Problem != want[i].Problem {
			t.Errorf("finding %d = %v, want %s rule %d: %s", i, got[i], want[i].Role, want[i].Rule, want[i].Problem)
		}
	}
}
