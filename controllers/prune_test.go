package controllers

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/example-inc/memcached-operator/api/v1/gen"
)

func TestPrunePatch(t *testing.T) {
	proxy := []corev1.EnvVar{{Name: "NO_PROXY", Value: ".svc"}}
	tests := []struct {
		name      string
		container corev1.Container
		opts      Options
		want      string
	}{
		{name: "nothing stale", want: "",
			container: corev1.Container{Name: "memcached", Ports: []corev1.ContainerPort{{ContainerPort: 11211}},
				Env: []corev1.EnvVar{{Name: "NO_PROXY", Value: "old"}, {Name: "OTHER", Value: "x"}}},
			opts: Options{ProxyEnv: proxy}},
		{name: "edited port and stray proxy variable",
			container: corev1.Container{Name: "memcached", Ports: []corev1.ContainerPort{{ContainerPort: 1234}},
				Env: []corev1.EnvVar{{Name: "https_proxy", Value: "x"}, {Name: "OTHER", Value: "x"}}},
			want: `{"spec":{"template":{"spec":{"containers":[{"env":[{"$patch":"delete","name":"https_proxy"}],"name":"memcached","ports":[{"$patch":"delete","containerPort":1234}]}]}}}}`},
		{name: "other containers are not ours", want: "",
			container: corev1.Container{Name: "sidecar", Env: []corev1.EnvVar{{Name: "HTTP_PROXY", Value: "x"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mc := gen.Memcached("ns", "m", gen.WithSize(1))
			live := &appsv1.Deployment{}
			live.Spec.Template.Spec.Containers = []corev1.Container{tt.container}
			if got := string(prunePatch(live, nil, desiredDeployment(mc, tt.opts.withDefaults(), false))); got != tt.want {
				t.Errorf("prunePatch() = %s\nwant %s", got, tt.want)
			}
		})
	}
}
