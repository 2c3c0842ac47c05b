package e2e

import (
	"fmt"
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
)

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
