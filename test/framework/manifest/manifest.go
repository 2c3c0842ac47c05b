package manifest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"

	"github.com/operator-framework/api/pkg/manifests"
	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
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

// ManagerContainer is the manager's container in ManagerDeployment.
const ManagerContainer = "manager"

// ManagerResourceEnv is the environment the manager Deployment of bundle/
// gives the manager from its own resources (see ResourceEnv): what an
// operator started as a process needs to run as it is deployed.
func ManagerResourceEnv() ([]string, error) {
	b, err := Bundle()
	if err != nil {
		return nil, err
	}
	d, err := Deployment(b.CSV)
	if err != nil {
		return nil, err
	}
	c, err := ManagerIn(d.Spec.Template.Spec.Containers)
	if err != nil {
		return nil, fmt.Errorf("Deployment %s: %w", d.Name, err)
	}
	return ResourceEnv(c)
}

// ManagerIn is the manager's container among containers.
func ManagerIn(containers []corev1.Container) (*corev1.Container, error) {
	for i := range containers {
		if containers[i].Name == ManagerContainer {
			return &containers[i], nil
		}
	}
	return nil, fmt.Errorf("no container %q", ManagerContainer)
}

// ResourceEnv is the environment the kubelet gives c from its variables
// that name one of c's own resources (resourceFieldRef): each value rounded
// up to whole divisors, as the kubelet rounds it. Other variables are left
// out, and a resource c sets no value for is an error, since the kubelet
// would put the node's capacity in its place.
func ResourceEnv(c *corev1.Container) ([]string, error) {
	var env []string
	for _, e := range c.Env {
		if e.ValueFrom == nil || e.ValueFrom.ResourceFieldRef == nil {
			continue
		}
		ref := e.ValueFrom.ResourceFieldRef
		divisor := ref.Divisor
		if divisor.IsZero() {
			divisor = resource.MustParse("1")
		}
		var q resource.Quantity
		var ok bool
		switch ref.Resource {
		case "limits.cpu", "limits.memory":
			q, ok = c.Resources.Limits[corev1.ResourceName(ref.Resource[len("limits."):])]
		case "requests.cpu", "requests.memory":
			q, ok = c.Resources.Requests[corev1.ResourceName(ref.Resource[len("requests."):])]
		default:
			return nil, fmt.Errorf("%s: resource %q is not one of limits or requests of cpu or memory", e.Name, ref.Resource)
		}
		if !ok {
			return nil, fmt.Errorf("%s: container %s sets no %s", e.Name, c.Name, ref.Resource)
		}
		// Milli-units for both: exact for every CPU quantity and for memory
		// below 9 PB.
		v := int64(math.Ceil(float64(q.MilliValue()) / float64(divisor.MilliValue())))
		env = append(env, e.Name+"="+strconv.FormatInt(v, 10))
	}
	return env, nil
}
