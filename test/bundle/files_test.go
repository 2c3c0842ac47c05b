package bundle

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/operator-framework/api/pkg/manifests"
	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/example-inc/memcached-operator/hack/repo"
	"github.com/example-inc/memcached-operator/test/framework/manifest"
)

// Paths of the bundle and of the config/ files it is made from.
var (
	bundleDockerfile = filepath.Join(repo.Root(), "bundle.Dockerfile")
	managerManifest  = filepath.Join(repo.Root(), "config", "manager", "manager.yaml")
	samplesDir       = filepath.Join(repo.Root(), "config", "samples")
	iconFile         = filepath.Join(repo.Root(), "config", "manifests", "icon.svg")
)

// What the bundle is expected to name.
const (
	packageName = "memcached-operator"
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
	b, err := manifest.Bundle()
	if err != nil {
		t.Fatal(err)
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
	objs, err := manifest.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// managerPod returns the pod template of the manager Deployment the CSV
// installs.
func managerPod(t *testing.T, csv *v1alpha1.ClusterServiceVersion) corev1.PodSpec {
	t.Helper()
	d, err := manifest.Deployment(csv)
	if err != nil {
		t.Fatal(err)
	}
	return d.Spec.Template.Spec
}

// managerIn returns the manager container of a pod spec.
func managerIn(t *testing.T, spec corev1.PodSpec) corev1.Container {
	t.Helper()
	c, err := manifest.ManagerIn(spec.Containers)
	if err != nil {
		t.Fatalf("the pod template: %v", err)
	}
	return *c
}
