package e2e

import (
	"fmt"
	"reflect"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/example-inc/memcached-operator/test/framework/netpolicy"
)

// TestConfigDefaultNetworkPolicies: the kubectl install (config/default)
// puts NetworkPolicies beside the manager pod that admit into it only the
// webhook port, from any source, since the API server calling it is rarely a
// pod a selector could name and the webhooks fail closed, and the metrics
// port, from namespaces labelled metrics: enabled. The ports are the ones
// the manager serves on: the container's webhook-server port and the metrics
// Service's target. No CNI plugin here enforces them (docs/olm.md).
func TestConfigDefaultNetworkPolicies(t *testing.T) {
	objs, err := kustomizeBuild(configDefaultDir)
	if err != nil {
		t.Fatal(err)
	}
	d, err := deploymentIn(objs, managerDeploymentName)
	if err != nil {
		t.Fatal(err)
	}
	var policies []networkingv1.NetworkPolicy
	var metricsPort int32
	for _, u := range objs {
		switch u.GetKind() {
		case "NetworkPolicy":
			var p networkingv1.NetworkPolicy
			if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(u.Object, &p, true); err != nil {
				t.Fatal(err)
			}
			if p.Namespace != d.Namespace {
				t.Errorf("NetworkPolicy %s is in namespace %q, the manager in %q", p.Name, p.Namespace, d.Namespace)
			}
			policies = append(policies, p)
		case "Service":
			if u.GetName() != managerDeploymentName+"-metrics-service" {
				continue
			}
			var svc corev1.Service
			if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(u.Object, &svc, true); err != nil {
				t.Fatal(err)
			}
			metricsPort = svc.Spec.Ports[0].TargetPort.IntVal
		}
	}
	if metricsPort == 0 {
		t.Fatal("config/default has no metrics Service")
	}
	manager := slices.IndexFunc(d.Spec.Template.Spec.Containers, func(c corev1.Container) bool { return c.Name == "manager" })
	if manager < 0 {
		t.Fatal("no manager container")
	}
	ports := d.Spec.Template.Spec.Containers[manager].Ports
	webhook := slices.IndexFunc(ports, func(p corev1.ContainerPort) bool { return p.Name == "webhook-server" })
	if webhook < 0 {
		t.Fatalf("the manager container has no webhook-server port: %+v", ports)
	}

	got, err := netpolicy.AdmittedIngress(policies, d.Spec.Template.Labels)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		fmt.Sprintf("TCP/%d", ports[webhook].ContainerPort): {netpolicy.AnySource},
		fmt.Sprintf("TCP/%d", metricsPort):                  {"namespaces{metrics=enabled}"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("config/default's NetworkPolicies admit %v into the manager pod (labels %v), want %v", got, d.Spec.Template.Labels, want)
	}
}
