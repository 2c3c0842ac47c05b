package bundle

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/example-inc/memcached-operator/hack/repo"
	"github.com/example-inc/memcached-operator/test/framework/manifest"
)

// bundleObjects reads every manifest of bundle/manifests.
func bundleObjects(t *testing.T) []*unstructured.Unstructured {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(manifest.BundleDir, "manifests", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var objs []*unstructured.Unstructured
	for _, f := range files {
		objs = append(objs, readObjects(t, f)...)
	}
	return objs
}

// withoutServerFields drops what a manifest may carry that is not part of
// the definition: creationTimestamp and status.
func withoutServerFields(u *unstructured.Unstructured) map[string]any {
	c := u.DeepCopy()
	unstructured.RemoveNestedField(c.Object, "metadata", "creationTimestamp")
	unstructured.RemoveNestedField(c.Object, "status")
	return c.Object
}

// The CRDs in the bundle are the ones controller-gen writes into
// config/crd/bases (`make manifests`), field for field.
func TestBundleCRDsAreConfigCRDs(t *testing.T) {
	want := map[string]map[string]any{}
	files, err := filepath.Glob(filepath.Join(repo.CRDDir(), "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		for _, u := range readObjects(t, f) {
			want[u.GetName()] = withoutServerFields(u)
		}
	}
	got := map[string]map[string]any{}
	for _, u := range bundleObjects(t) {
		if u.GetKind() == "CustomResourceDefinition" {
			got[u.GetName()] = withoutServerFields(u)
		}
	}
	if len(want) == 0 {
		t.Fatal("config/crd/bases holds no CRD")
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("bundle CRDs differ from config/crd/bases; run make bundle (-config +bundle):\n%s", diff)
	}
}

// webhookConfig is what a webhook definition must copy from
// config/webhook/manifests.yaml.
type webhookConfig struct {
	Type                    v1alpha1.WebhookAdmissionType
	Path                    string
	Rules                   []admissionregistrationv1.RuleWithOperations
	FailurePolicy           *admissionregistrationv1.FailurePolicyType
	MatchPolicy             *admissionregistrationv1.MatchPolicyType
	SideEffects             *admissionregistrationv1.SideEffectClass
	TimeoutSeconds          *int32
	AdmissionReviewVersions []string
	ObjectSelector          any
	ReinvocationPolicy      *admissionregistrationv1.ReinvocationPolicyType
}

// webhookTypes are the kinds that configure webhooks, by the type a CSV's
// webhook definition gives them.
var webhookTypes = map[string]v1alpha1.WebhookAdmissionType{
	"MutatingWebhookConfiguration":   v1alpha1.MutatingAdmissionWebhook,
	"ValidatingWebhookConfiguration": v1alpha1.ValidatingAdmissionWebhook,
}

func configWebhooks(t *testing.T) map[string]webhookConfig {
	t.Helper()
	out := map[string]webhookConfig{}
	for _, u := range readObjects(t, filepath.Join(repo.WebhookDir(), "manifests.yaml")) {
		typ, ok := webhookTypes[u.GetKind()]
		if !ok {
			continue
		}
		// A validating webhook has a mutating one's fields but
		// reinvocationPolicy, so one type decodes both strictly.
		var c admissionregistrationv1.MutatingWebhookConfiguration
		fromUnstructured(t, u, &c)
		for _, w := range c.Webhooks {
			out[w.Name] = webhookConfig{
				Type: typ, Path: servicePath(w.ClientConfig),
				Rules: w.Rules, FailurePolicy: w.FailurePolicy, MatchPolicy: w.MatchPolicy,
				SideEffects: w.SideEffects, TimeoutSeconds: w.TimeoutSeconds,
				AdmissionReviewVersions: w.AdmissionReviewVersions, ObjectSelector: w.ObjectSelector,
				ReinvocationPolicy: w.ReinvocationPolicy,
			}
		}
	}
	return out
}

func servicePath(c admissionregistrationv1.WebhookClientConfig) string {
	if c.Service == nil || c.Service.Path == nil {
		return ""
	}
	return *c.Service.Path
}

func fromUnstructured(t *testing.T, u *unstructured.Unstructured, out any) {
	t.Helper()
	if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(u.Object, out, true); err != nil {
		t.Fatalf("decoding %s %s: %v", u.GetKind(), u.GetName(), err)
	}
}

// The CSV declares every webhook controller-gen writes, with the same rules
// and settings, served by the manager Deployment behind the port mapping of
// config/webhook/service.yaml; OLM creates the configurations from these.
func TestWebhookDefinitionsAreConfigWebhooks(t *testing.T) {
	csv := loadBundle(t).CSV
	want := configWebhooks(t)
	if len(want) == 0 {
		t.Fatal("config/webhook/manifests.yaml holds no webhook")
	}

	var svc corev1.Service
	readYAML(t, filepath.Join(repo.WebhookDir(), "service.yaml"), &svc)
	if len(svc.Spec.Ports) != 1 {
		t.Fatalf("config/webhook/service.yaml has %d ports, want 1", len(svc.Spec.Ports))
	}
	port := svc.Spec.Ports[0]
	if port.Port != 443 || port.TargetPort != intstr.FromInt32(9443) {
		t.Errorf("webhook Service maps %d to %s, want 443 to 9443", port.Port, port.TargetPort.String())
	}
	manager := managerIn(t, managerPod(t, csv))

	got := map[string]webhookConfig{}
	for _, d := range csv.Spec.WebhookDefinitions {
		path := ""
		if d.WebhookPath != nil {
			path = *d.WebhookPath
		}
		var selector any
		if d.ObjectSelector != nil {
			selector = d.ObjectSelector
		}
		got[d.GenerateName] = webhookConfig{
			Type: d.Type, Path: path, Rules: d.Rules, FailurePolicy: d.FailurePolicy,
			MatchPolicy: d.MatchPolicy, SideEffects: d.SideEffects, TimeoutSeconds: d.TimeoutSeconds,
			AdmissionReviewVersions: d.AdmissionReviewVersions, ObjectSelector: selector,
			ReinvocationPolicy: d.ReinvocationPolicy,
		}
		if d.DeploymentName != manifest.ManagerDeployment {
			t.Errorf("webhook %s is served by Deployment %q, want %q", d.GenerateName, d.DeploymentName, manifest.ManagerDeployment)
		}
		if d.ContainerPort != port.Port {
			t.Errorf("webhook %s: containerPort %d, want %d", d.GenerateName, d.ContainerPort, port.Port)
		}
		if d.TargetPort == nil || *d.TargetPort != port.TargetPort {
			t.Errorf("webhook %s: targetPort %v, want %s", d.GenerateName, d.TargetPort, port.TargetPort.String())
		}
		if !slices.ContainsFunc(manager.Ports, func(p corev1.ContainerPort) bool { return p.ContainerPort == port.TargetPort.IntVal }) {
			t.Errorf("webhook %s: the manager container does not expose port %d", d.GenerateName, port.TargetPort.IntVal)
		}
	}
	// Compare through JSON, so an unset selector and an empty one agree.
	if diff := cmp.Diff(asJSON(t, want), asJSON(t, got)); diff != "" {
		t.Errorf("CSV webhookdefinitions differ from config/webhook/manifests.yaml; run make bundle (-config +bundle):\n%s", diff)
	}
}

func asJSON(t *testing.T, v any) any {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// alm-examples, which the console offers as the starting point of a new
// object, are the CRs in config/samples.
func TestALMExamplesAreSamples(t *testing.T) {
	csv := loadBundle(t).CSV
	var got []map[string]any
	if err := json.Unmarshal([]byte(csv.Annotations["alm-examples"]), &got); err != nil {
		t.Fatalf("alm-examples: %v", err)
	}
	var want []map[string]any
	files, err := filepath.Glob(filepath.Join(samplesDir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if filepath.Base(f) == "kustomization.yaml" {
			continue
		}
		for _, u := range readObjects(t, f) {
			want = append(want, u.Object)
		}
	}
	if len(want) == 0 {
		t.Fatal("config/samples holds no CR")
	}
	byName := cmpopts.SortSlices(func(a, b map[string]any) bool {
		return (&unstructured.Unstructured{Object: a}).GetName() < (&unstructured.Unstructured{Object: b}).GetName()
	})
	if diff := cmp.Diff(want, got, byName); diff != "" {
		t.Errorf("alm-examples differ from config/samples; run make bundle (-samples +alm-examples):\n%s", diff)
	}
	for _, crd := range csv.Spec.CustomResourceDefinitions.Owned {
		found := false
		for _, ex := range got {
			u := unstructured.Unstructured{Object: ex}
			found = found || u.GetKind() == crd.Kind && strings.HasSuffix(crd.Name, "."+u.GroupVersionKind().Group)
		}
		if !found {
			t.Errorf("owned CRD %s has no example in alm-examples", crd.Name)
		}
	}
}

// baseCSV reads the CSV base that `make bundle` starts from.
func baseCSV(t *testing.T) v1alpha1.ClusterServiceVersion {
	t.Helper()
	var csv v1alpha1.ClusterServiceVersion
	readYAML(t, filepath.Join(repo.Root(), "config", "manifests", "bases", packageName+".clusterserviceversion.yaml"), &csv)
	return csv
}

// What the CSV takes from config/manifests/bases is unchanged: the bundle
// was made from the committed base, and the base's CRD descriptors are the
// +operator-sdk:csv markers' (make bundle refreshes them first).
func TestCSVCarriesBase(t *testing.T) {
	base := baseCSV(t)
	csv := loadBundle(t).CSV
	for k, v := range base.Annotations {
		switch k {
		case "alm-examples", "containerImage", "createdAt":
			continue // filled in by make bundle
		}
		if csv.Annotations[k] != v {
			t.Errorf("annotation %s: bundle %q, base %q", k, csv.Annotations[k], v)
		}
	}
	type uiFields struct {
		CRDs           v1alpha1.CustomResourceDefinitions
		Description    string
		DisplayName    string
		Icon           []v1alpha1.Icon
		InstallModes   []v1alpha1.InstallMode
		Keywords       []string
		Links          []v1alpha1.AppLink
		Maintainers    []v1alpha1.Maintainer
		Maturity       string
		MinKubeVersion string
		Provider       v1alpha1.AppLink
	}
	pick := func(s v1alpha1.ClusterServiceVersionSpec) uiFields {
		return uiFields{s.CustomResourceDefinitions, s.Description, s.DisplayName, s.Icon, s.InstallModes,
			s.Keywords, s.Links, s.Maintainers, s.Maturity, s.MinKubeVersion, s.Provider}
	}
	if diff := cmp.Diff(pick(base.Spec), pick(csv.Spec)); diff != "" {
		t.Errorf("CSV differs from config/manifests/bases; run make bundle (-base +bundle):\n%s", diff)
	}
}

// Every spec and status descriptor names a field the CRD's schema has.
func TestDescriptorsNameSchemaFields(t *testing.T) {
	b := loadBundle(t)
	for _, owned := range b.CSV.Spec.CustomResourceDefinitions.Owned {
		var schema map[string]any
		for _, crd := range b.V1CRDs {
			if crd.Name != owned.Name {
				continue
			}
			for _, v := range crd.Spec.Versions {
				if v.Name == owned.Version && v.Schema != nil {
					schema = asJSON(t, v.Schema.OpenAPIV3Schema).(map[string]any)
				}
			}
		}
		if schema == nil {
			t.Errorf("owned CRD %s %s is not in the bundle", owned.Name, owned.Version)
			continue
		}
		var paths []string
		for _, d := range owned.SpecDescriptors {
			paths = append(paths, "spec."+d.Path)
		}
		for _, d := range owned.StatusDescriptors {
			paths = append(paths, "status."+d.Path)
		}
		for _, p := range paths {
			node := schema
			for _, part := range strings.Split(p, ".") {
				props, _ := node["properties"].(map[string]any)
				next, ok := props[part].(map[string]any)
				if !ok {
					t.Errorf("descriptor %q: %s has no field %q", p, owned.Name, part)
					break
				}
				node = next
			}
		}
	}
}

// The icon is config/manifests/icon.svg, which the catalog's package uses
// too (make catalog).
func TestIconIsConfigIcon(t *testing.T) {
	csv := loadBundle(t).CSV
	want, err := os.ReadFile(iconFile)
	if err != nil {
		t.Fatal(err)
	}
	if len(csv.Spec.Icon) != 1 {
		t.Fatalf("the CSV has %d icons, want 1", len(csv.Spec.Icon))
	}
	icon := csv.Spec.Icon[0]
	if icon.MediaType != "image/svg+xml" {
		t.Errorf("icon media type %q, want image/svg+xml", icon.MediaType)
	}
	if got, err := base64.StdEncoding.DecodeString(icon.Data); err != nil || string(got) != string(want) {
		t.Errorf("the CSV's icon is not config/manifests/icon.svg (%v)", err)
	}
}
