package controllers

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	"k8s.io/utils/ptr"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
	"github.com/example-inc/memcached-operator/api/v1/gen"
)

func TestDesiredDeployment(t *testing.T) {
	proxy := []corev1.EnvVar{{Name: "HTTP_PROXY", Value: "http://p:3128"}, {Name: "http_proxy", Value: "http://p:3128"}}
	tests := []struct {
		name         string
		mc           *cachev1.Memcached
		opts         Options
		wantReplicas int32
		wantUser     *int64
		wantEnv      []string
	}{
		{name: "kubernetes gets the image's numeric user", mc: gen.Memcached("ns", "a", gen.WithSize(3), gen.WithUID("uid-1")),
			opts: Options{Platform: PlatformKubernetes}, wantReplicas: 3, wantUser: ptr.To[int64](memcachedUID)},
		{name: "openshift leaves the user to the SCC", mc: gen.Memcached("ns", "a", gen.WithSize(2), gen.WithUID("uid-1")),
			opts: Options{Platform: PlatformOpenShift}, wantReplicas: 2},
		{name: "no size falls back to the default", mc: gen.Memcached("ns", "a", gen.WithUID("uid-1")),
			opts: Options{DefaultSize: 4}, wantReplicas: 4, wantUser: ptr.To[int64](memcachedUID)},
		{name: "proxy variables reach the container", mc: gen.Memcached("ns", "a", gen.WithSize(1), gen.WithUID("uid-1")),
			opts: Options{ProxyEnv: proxy}, wantReplicas: 1, wantUser: ptr.To[int64](memcachedUID),
			wantEnv: []string{"HTTP_PROXY", "http_proxy"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := tt.opts.withDefaults()
			d := desiredDeployment(tt.mc, o, false)
			if got := *d.Spec.Replicas; got != tt.wantReplicas {
				t.Errorf("replicas = %d, want %d", got, tt.wantReplicas)
			}
			if got := d.Spec.Template.Spec.SecurityContext.RunAsUser; !cmp.Equal(got, tt.wantUser) {
				t.Errorf("runAsUser = %v, want %v", ptr.Deref(got, -1), ptr.Deref(tt.wantUser, -1))
			}
			c := d.Spec.Template.Spec.Containers[0]
			if *c.Image != DefaultMemcachedImage {
				t.Errorf("image = %q", *c.Image)
			}
			if diff := cmp.Diff([]string{"memcached", "--port=11211", "--memory-limit=64", "--extended=modern", "--verbose"}, c.Command); diff != "" {
				t.Errorf("command (-want +got):\n%s", diff)
			}
			if *c.Ports[0].ContainerPort != 11211 || *c.Ports[0].Name != "memcached" {
				t.Errorf("port = %v", c.Ports[0])
			}
			var env []string
			for _, e := range c.Env {
				env = append(env, *e.Name)
			}
			if diff := cmp.Diff(tt.wantEnv, env); diff != "" {
				t.Errorf("env names (-want +got):\n%s", diff)
			}
			if d.OwnerReferences[0].UID == nil || *d.OwnerReferences[0].UID != "uid-1" || !*d.OwnerReferences[0].Controller {
				t.Errorf("owner reference = %+v", d.OwnerReferences[0])
			}
			if diff := cmp.Diff(selectorLabels(tt.mc), d.Spec.Selector.MatchLabels); diff != "" {
				t.Errorf("selector (-want +got):\n%s", diff)
			}
			if d.Spec.Template.Labels[labelManagedBy] != FieldOwner {
				t.Errorf("pod template lacks the managed-by label the cache selects on: %v", d.Spec.Template.Labels)
			}
		})
	}
}

// TestDesiredDeploymentUnchangedByDefaults holds the Deployment of a
// Memcached that sets only its size to the one the operator built before the
// spec had memory, item size, connections, threads, resources and placement,
// but for the rollout strategy: its desired hash, computed from the whole
// apply configuration, is the old one once the strategy is taken out. So an
// upgrade from an operator without the strategy writes each Deployment's
// strategy once, and its pod template not at all: no pod restarts.
func TestDesiredDeploymentUnchangedByDefaults(t *testing.T) {
	for platform, want := range map[Platform]struct{ withStrategy, withoutStrategy string }{
		PlatformKubernetes: {"fb5020d42e75cfe1", "34feeddbe5683af4"},
		PlatformOpenShift:  {"7920a56c9538f7bb", "c721c9bcaa4a48f8"},
	} {
		mc := gen.Memcached("ns", "a", gen.WithSize(3), gen.WithUID("uid-1"))
		// The image the hashes were taken with: a release that moves the
		// default image replaces the pods by design (docs/memcached.md);
		// this guards the rest of the Deployment.
		d := desiredDeployment(mc, Options{Platform: platform, Image: "docker.io/library/memcached:1.6.39-alpine"}.withDefaults(), false)
		if got := d.Annotations[desiredHashAnnotation]; got != want.withStrategy {
			t.Errorf("%s: desired hash = %s, want %s (the Deployment of a size-only Memcached changed)", platform, got, want.withStrategy)
		}
		d.Annotations, d.Spec.Strategy = nil, nil
		if got := desiredHash(d)[desiredHashAnnotation]; got != want.withoutStrategy {
			t.Errorf("%s: desired hash without the strategy = %s, want %s (more than the strategy changed)", platform, got, want.withoutStrategy)
		}
	}
}

// TestDesiredDeploymentReplacesOnePodAtATime: a new pod is ready before an
// old one stops, whatever the size (Kubernetes' default stops a quarter of
// the pods at once).
func TestDesiredDeploymentReplacesOnePodAtATime(t *testing.T) {
	d := desiredDeployment(gen.Memcached("ns", "a", gen.WithSize(16)), Options{}.withDefaults(), false)
	want := appsv1ac.DeploymentStrategy().WithType(appsv1.RollingUpdateDeploymentStrategyType).
		WithRollingUpdate(appsv1ac.RollingUpdateDeployment().
			WithMaxUnavailable(intstr.FromInt32(0)).WithMaxSurge(intstr.FromInt32(1)))
	if diff := cmp.Diff(want, d.Spec.Strategy); diff != "" {
		t.Errorf("strategy (-want +got):\n%s", diff)
	}
}

// TestDesiredDeploymentCarriesTheSpec: the settings reach memcached's command
// line, and the resources and placement reach the pod template as the spec
// gives them.
func TestDesiredDeploymentCarriesTheSpec(t *testing.T) {
	resources := corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}}
	placement := func(mc *cachev1.Memcached) {
		mc.Spec.Resources = &resources
		mc.Spec.NodeSelector = map[string]string{"disk": "ssd"}
		mc.Spec.Tolerations = []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "cache", Effect: corev1.TaintEffectNoSchedule}}
		mc.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{
			Weight: 10, Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a"}}}}}}}}
		mc.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{MaxSkew: 2, TopologyKey: "zone", WhenUnsatisfiable: corev1.DoNotSchedule}}
		mc.Spec.PriorityClassName = "cache-critical"
	}
	mc := gen.Memcached("ns", "a", gen.WithSize(2), gen.WithUID("uid-1"), gen.WithMemory("256Mi"), gen.WithMaxItemSize("4Mi"),
		gen.WithMaxConnections(4096), gen.WithThreads(8), placement)
	d := desiredDeployment(mc, Options{}.withDefaults(), false)
	pod := d.Spec.Template.Spec
	if diff := cmp.Diff([]string{"memcached", "--port=11211", "--memory-limit=256", "--extended=modern", "--verbose",
		"--max-item-size=4194304", "--conn-limit=4096", "--threads=8"}, pod.Containers[0].Command); diff != "" {
		t.Errorf("command (-want +got):\n%s", diff)
	}
	if got := (*pod.Containers[0].Resources.Limits)[corev1.ResourceMemory]; got.String() != "1Gi" {
		t.Errorf("memory limit = %s, want the spec's 1Gi", got.String())
	}
	if diff := cmp.Diff(map[string]string{"disk": "ssd"}, pod.NodeSelector); diff != "" {
		t.Errorf("nodeSelector (-want +got):\n%s", diff)
	}
	if len(pod.Tolerations) != 1 || *pod.Tolerations[0].Key != "dedicated" || *pod.Tolerations[0].Effect != corev1.TaintEffectNoSchedule {
		t.Errorf("tolerations = %+v", pod.Tolerations)
	}
	if pod.Affinity == nil || *pod.Affinity.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution[0].Weight != 10 {
		t.Errorf("affinity = %+v", pod.Affinity)
	}
	if len(pod.TopologySpreadConstraints) != 1 || *pod.TopologySpreadConstraints[0].MaxSkew != 2 {
		t.Errorf("topologySpreadConstraints = %+v", pod.TopologySpreadConstraints)
	}
	if ptr.Deref(pod.PriorityClassName, "") != "cache-critical" {
		t.Errorf("priorityClassName = %v", pod.PriorityClassName)
	}
}
