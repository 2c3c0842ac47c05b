package e2e

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/example-inc/memcached-operator/hack/repo"
	"github.com/example-inc/memcached-operator/test/framework/harness"
	"github.com/example-inc/memcached-operator/test/framework/manifest"
)

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
