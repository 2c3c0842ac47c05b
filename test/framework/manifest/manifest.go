package manifest

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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/example-inc/memcached-operator/hack/repo"
)

// ManagerDeployment is the name of the manager's Deployment, in
// config/manager and in the CSV's install strategy.
const ManagerDeployment = "memcached-operator-controller-manager"

// BundleDir is the bundle that make bundle writes.
var BundleDir = filepath.Join(repo.Root(), "bundle")

// Decode decodes every document of a YAML (or JSON) stream; empty
// documents are skipped.
func Decode(data []byte) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); errors.Is(err, io.EOF) {
			return out, nil
		} else if err != nil {
			return nil, err
		}
		if len(u.Object) > 0 {
			out = append(out, u)
		}
	}
}

// ReadFile decodes every document of a YAML file.
func ReadFile(path string) ([]*unstructured.Unstructured, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	objs, err := Decode(data)
	if err != nil {
		return nil, fmt.Errorf("decoding %s: %w", path, err)
	}
	return objs, nil
}

// Bundle reads bundle/ as OLM's tooling does; it fails without a CSV.
func Bundle() (*manifests.Bundle, error) {
	b, err := manifests.GetBundleFromDir(BundleDir)
	if err != nil {
		return nil, fmt.Errorf("loading %s: %w", BundleDir, err)
	}
	if b.CSV == nil {
		return nil, fmt.Errorf("%s holds no ClusterServiceVersion", BundleDir)
	}
	return b, nil
}

// Deployment is the manager Deployment of the CSV's install strategy, as OLM
// would create it.
func Deployment(csv *v1alpha1.ClusterServiceVersion) (*appsv1.Deployment, error) {
	for _, d := range csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs {
		if d.Name == ManagerDeployment {
			return &appsv1.Deployment{
				ObjectMeta: metav1.ObjectMeta{Name: d.Name, Labels: d.Label},
				Spec:       *d.Spec.DeepCopy(),
			}, nil
		}
	}
	return nil, fmt.Errorf("the CSV installs no Deployment %q", ManagerDeployment)
}
