package ingresspolicy

import (
	"encoding/json"
	"reflect"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"

	"github.com/example-inc/memcached-operator/controllers/ingresspolicy/netpolicy"
)

// What the policies admit into the manager's pods, as the NetworkPolicy API
// defines it: the webhook port from any source (the API server is rarely a
// pod a selector could name), the metrics port from namespaces labelled
// metrics: enabled, nothing else; and nothing of a server that is off.
func TestDesiredAdmitsOnlyWhatTheManagerServes(t *testing.T) {
	selector := map[string]string{"app.kubernetes.io/name": "memcached-operator", "control-plane": "controller-manager"}
	podLabels := map[string]string{"app.kubernetes.io/name": "memcached-operator", "control-plane": "controller-manager", "pod-template-hash": "5d8f"}
	tests := []struct {
		name                     string
		webhookPort, metricsPort int32
		want                     map[string][]string
	}{
		{"both servers", 9443, 8443, map[string][]string{"TCP/9443": {netpolicy.AnySource}, "TCP/8443": {"namespaces{metrics=enabled}"}}},
		{"other ports", 10250, 9090, map[string][]string{"TCP/10250": {netpolicy.AnySource}, "TCP/9090": {"namespaces{metrics=enabled}"}}},
		{"webhooks off", 0, 8443, map[string][]string{"TCP/8443": {"namespaces{metrics=enabled}"}}},
		{"metrics off", 9443, 0, map[string][]string{"TCP/9443": {netpolicy.AnySource}}},
		// No policy selects the pod: nothing is served, nothing is closed.
		{"both off", 0, 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			owner := metav1ac.OwnerReference().WithAPIVersion("apps/v1").WithKind("Deployment").WithName("m").WithUID("u")
			desired := Desired(Target{Namespace: "ops", PodSelector: selector, Owner: owner, WebhookPort: tt.webhookPort, MetricsPort: tt.metricsPort})
			if len(desired) != 2 {
				t.Fatalf("Desired names %d policies, want 2 (those off as nil)", len(desired))
			}
			var policies []networkingv1.NetworkPolicy
			for name, ac := range desired {
				if ac == nil {
					continue
				}
				p := asPolicy(t, ac)
				if p.Name != name || p.Namespace != "ops" || len(p.OwnerReferences) != 1 || p.OwnerReferences[0].Name != "m" {
					t.Errorf("policy %s is %s/%s owned by %+v, want ops/%s owned by Deployment m", name, p.Namespace, p.Name, p.OwnerReferences, name)
				}
				policies = append(policies, p)
			}
			got, err := netpolicy.AdmittedIngress(policies, podLabels)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("the policies admit %v, want %v", got, tt.want)
			}
			if other, _ := netpolicy.AdmittedIngress(policies, map[string]string{"app.kubernetes.io/name": "memcached"}); other != nil {
				t.Errorf("the policies select a memcached pod, admitting %v into it", other)
			}
		})
	}
}

// asPolicy is ac as the API server would store it.
func asPolicy(t *testing.T, ac any) networkingv1.NetworkPolicy {
	t.Helper()
	data, err := json.Marshal(ac)
	if err != nil {
		t.Fatal(err)
	}
	var p networkingv1.NetworkPolicy
	if err := json.Unmarshal(data, &p); err != nil {
		t.Fatal(err)
	}
	return p
}
