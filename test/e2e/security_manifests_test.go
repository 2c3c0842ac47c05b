package e2e

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/operator-framework/api/pkg/manifests"
	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/example-inc/memcached-operator/hack/repo"
	"github.com/example-inc/memcached-operator/test/framework/harness"
)

// Where the generated manifests are.
var (
	configRBACDir     = filepath.Join(repo.Root(), "config", "rbac")
	configDefaultDir  = filepath.Join(repo.Root(), "config", "default")
	bundleDir         = filepath.Join(repo.Root(), "bundle")
	bundleManifestDir = filepath.Join(bundleDir, "manifests")
)

// Names config/default gives the operator's objects (config/manager and
// config/rbac with its namePrefix and namespace), beside those of
// node_inclusteroperator_test.go.
const (
	operatorServiceAccount = "memcached-operator-controller-manager"
	managerDeploymentName  = "memcached-operator-controller-manager"
)

// role is the rules of one Role, ClusterRole or CSV permission set, named
// for messages by where it comes from.
type role struct {
	name  string
	rules []rbacv1.PolicyRule
}

// readObjects decodes every document of a YAML stream; empty documents are
// skipped.
func readObjects(data []byte) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, err
		}
		if len(u.Object) > 0 {
			out = append(out, u)
		}
	}
}

// rolesIn returns the Roles and ClusterRoles of a YAML stream; source names
// the stream in the roles' names.
func rolesIn(source string, data []byte) ([]role, error) {
	objs, err := readObjects(data)
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

// loadCSV reads bundle/ as OLM's tooling does.
func loadCSV() (*v1alpha1.ClusterServiceVersion, error) {
	b, err := manifests.GetBundleFromDir(bundleDir)
	if err != nil {
		return nil, fmt.Errorf("loading %s: %w", bundleDir, err)
	}
	if b.CSV == nil {
		return nil, fmt.Errorf("%s holds no ClusterServiceVersion", bundleDir)
	}
	return b.CSV, nil
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

// csvManagerDeployment is the manager Deployment of the CSV's install
// strategy, as OLM would create it.
func csvManagerDeployment(csv *v1alpha1.ClusterServiceVersion) (*appsv1.Deployment, error) {
	for _, d := range csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs {
		if d.Name == managerDeploymentName {
			return &appsv1.Deployment{
				ObjectMeta: metav1.ObjectMeta{Name: d.Name, Labels: d.Label},
				Spec:       *d.Spec.DeepCopy(),
			}, nil
		}
	}
	return nil, fmt.Errorf("the CSV installs no Deployment %q", managerDeploymentName)
}

// kustomizeBuild runs `kustomize build dir` and decodes the objects.
func kustomizeBuild(dir string) ([]*unstructured.Unstructured, error) {
	out, err := harness.KustomizeBuild(dir)
	if err != nil {
		return nil, err
	}
	return readObjects(out)
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
