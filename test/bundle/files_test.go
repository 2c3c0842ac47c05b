package bundle

import (
	"bytes"
	"encoding/base64"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/operator-framework/api/pkg/manifests"
	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/example-inc/memcached-operator/hack/repo"
)

// Paths of the bundle and of the config/ files it is made from.
var (
	bundleDir        = filepath.Join(repo.Root(), "bundle")
	bundleDockerfile = filepath.Join(repo.Root(), "bundle.Dockerfile")
	managerManifest  = filepath.Join(repo.Root(), "config", "manager", "manager.yaml")
	samplesDir       = filepath.Join(repo.Root(), "config", "samples")
	iconFile         = filepath.Join(repo.Root(), "config", "manifests", "icon.svg")
)

// What the bundle is expected to name.
const (
	packageName = "memcached-operator"
	// managerDeployment is config/manager's controller-manager with
	// config/default's name prefix; the webhook definitions point at it.
	managerDeployment = "memcached-operator-controller-manager"
	managerContainer  = "manager"
	// olmWebhookCertDir is where OLM mounts the webhook serving certificate
	// (tls.crt, tls.key) into the Deployment a webhook definition names; it
	// is also controller-runtime's default certificate directory.
	olmWebhookCertDir = "/tmp/k8s-webhook-server/serving-certs"
	// metricsCertDir is where the manager reads its metrics certificate
	// (--metrics-cert-path), from the Secret metricsServiceCASecret that
	// OpenShift's service CA writes for metricsService.
	metricsCertDir         = "/tmp/k8s-metrics-server/metrics-certs"
	metricsServiceCASecret = "metrics-server-cert"
	metricsService         = "memcached-operator-controller-manager-metrics-service"
)

// loadBundle reads bundle/ as OLM's tooling does.
func loadBundle(t *testing.T) *manifests.Bundle {
	t.Helper()
	b, err := manifests.GetBundleFromDir(bundleDir)
	if err != nil {
		t.Fatalf("loading %s: %v", bundleDir, err)
	}
	if b.CSV == nil {
		t.Fatalf("%s holds no ClusterServiceVersion", bundleDir)
	}
	return b
}

// readYAML decodes the one object in a YAML file into out.
func readYAML(t *testing.T, path string, out any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(data, out); err != nil {
		t.Fatalf("decoding %s: %v", path, err)
	}
}

// readObjects decodes every document of a multi-document YAML file.
func readObjects(t *testing.T, path string) []*unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var objs []*unstructured.Unstructured
	for {
		var u unstructured.Unstructured
		if err := dec.Decode(&u.Object); errors.Is(err, io.EOF) {
			return objs
		} else if err != nil {
			t.Fatalf("decoding %s: %v", path, err)
		}
		if len(u.Object) > 0 {
			objs = append(objs, &u)
		}
	}
}

// managerPod returns the pod template of the manager Deployment the CSV
// installs.
func managerPod(t *testing.T, csv *v1alpha1.ClusterServiceVersion) corev1.PodSpec {
	t.Helper()
	for _, d := range csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs {
		if d.Name == managerDeployment {
			return d.Spec.Template.Spec
		}
	}
	t.Fatalf("the CSV installs no Deployment %q", managerDeployment)
	return corev1.PodSpec{}
}

// managerIn returns the manager container of a pod spec.
func managerIn(t *testing.T, spec corev1.PodSpec) corev1.Container {
	t.Helper()
	for _, c := range spec.Containers {
		if c.Name == managerContainer {
			return c
		}
	}
	t.Fatalf("the pod template has no container %q", managerContainer)
	return corev1.Container{}
}

// readYAMLLoose decodes a YAML file into out, ignoring fields out lacks.
func readYAMLLoose(t *testing.T, path string, out any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, out); err != nil {
		t.Fatalf("decoding %s: %v", path, err)
	}
}

func decodeBase64(t *testing.T, s string) string {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		t.Fatalf("decoding base64: %v", err)
	}
	return string(b)
}
