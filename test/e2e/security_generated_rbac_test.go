package e2e

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/example-inc/memcached-operator/test/framework/manifest"
)

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
