package certs

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/example-inc/memcached-operator/hack/repo"
)

// The generated manifests become configurations on this host that differ
// from them only in name and clientConfig.
func TestLocalWebhookConfigurationsFromGeneratedManifests(t *testing.T) {
	g := NewWithT(t)
	manifests, err := os.ReadFile(filepath.Join(repo.WebhookDir(), "manifests.yaml"))
	g.Expect(err).NotTo(HaveOccurred())
	ca := []byte("-----BEGIN CERTIFICATE-----\nlocal CA\n-----END CERTIFICATE-----\n")
	objs, err := localWebhookConfigurations(manifests, LocalWebhookURL(19443), ca)
	g.Expect(err).NotTo(HaveOccurred())

	type hook struct{ name, url string }
	var mutating []hook
	var validating []hook
	var rules int
	for _, u := range objs {
		if !strings.HasPrefix(u.GetName(), LocalNamePrefix) {
			t.Errorf("%s %s: name lacks %q", u.GetKind(), u.GetName(), LocalNamePrefix)
		}
		if _, found := u.Object["metadata"].(map[string]any)["creationTimestamp"]; found {
			t.Errorf("%s: creationTimestamp would go into the apply", u.GetName())
		}
		var ccs []admissionregistrationv1.WebhookClientConfig
		switch u.GetKind() {
		case "MutatingWebhookConfiguration":
			var m admissionregistrationv1.MutatingWebhookConfiguration
			g.Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &m)).To(Succeed())
			for _, w := range m.Webhooks {
				mutating = append(mutating, hook{w.Name, *w.ClientConfig.URL})
				ccs = append(ccs, w.ClientConfig)
				rules += len(w.Rules)
			}
		case "ValidatingWebhookConfiguration":
			var v admissionregistrationv1.ValidatingWebhookConfiguration
			g.Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &v)).To(Succeed())
			for _, w := range v.Webhooks {
				validating = append(validating, hook{w.Name, *w.ClientConfig.URL})
				ccs = append(ccs, w.ClientConfig)
				rules += len(w.Rules)
			}
		default:
			t.Fatalf("unexpected kind %s", u.GetKind())
		}
		for _, cc := range ccs {
			if cc.Service != nil {
				t.Errorf("%s: clientConfig still names a service", u.GetName())
			}
			if string(cc.CABundle) != string(ca) {
				t.Errorf("%s: caBundle %q", u.GetName(), cc.CABundle)
			}
		}
	}
	wantMutating := []hook{
		{"mmemcached-v1.kb.io", "https://127.0.0.1:19443/mutate-cache-example-com-v1-memcached"},
		{"mmemcachedscale-v1.kb.io", "https://127.0.0.1:19443/mutate-cache-example-com-v1-memcached-scale"},
	}
	wantValidating := []hook{
		{"vmemcached-v1.kb.io", "https://127.0.0.1:19443/validate-cache-example-com-v1-memcached"},
		{"vmemcachedscale-v1.kb.io", "https://127.0.0.1:19443/validate-cache-example-com-v1-memcached-scale"},
	}
	if !slices.Equal(mutating, wantMutating) || !slices.Equal(validating, wantValidating) {
		t.Errorf("mutating %v, validating %v; want %v and %v", mutating, validating, wantMutating, wantValidating)
	}
	if rules != 4 {
		t.Errorf("%d rules, want the 4 generated ones", rules)
	}
}

func TestLocalWebhookConfigurationsRejects(t *testing.T) {
	tests := []struct {
		name      string
		manifests string
		wantErr   string
	}{
		{name: "empty", manifests: "", wantErr: "no webhook configurations"},
		{name: "only separators", manifests: "---\n---\n", wantErr: "no webhook configurations"},
		{name: "another kind", manifests: "apiVersion: v1\nkind: Service\nmetadata:\n  name: webhook-service\n", wantErr: "unexpected"},
		{name: "webhook without service", manifests: `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: v
webhooks:
- name: v.example.com
  clientConfig:
    url: https://example.com/validate
`, wantErr: "v.example.com has no service path"},
		{name: "not YAML", manifests: "{", wantErr: "webhook manifests"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := localWebhookConfigurations([]byte(tt.manifests), LocalWebhookURL(9443), []byte("ca"))
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}
