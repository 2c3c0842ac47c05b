package controllers

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
	"github.com/example-inc/memcached-operator/test/framework/gen"
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
			d := desiredDeployment(tt.mc, o)
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

func TestDesiredPDB(t *testing.T) {
	for size, want := range map[int32]bool{1: false, 2: true, 16: true} {
		if got := desiredPDB(gen.Memcached("ns", "a", gen.WithSize(size)), Options{}) != nil; got != want {
			t.Errorf("size %d: PDB present = %v, want %v", size, got, want)
		}
	}
}

func TestDesiredService(t *testing.T) {
	s := desiredService(gen.Memcached("ns", "a"))
	if *s.Spec.ClusterIP != corev1.ClusterIPNone {
		t.Errorf("clusterIP = %q, want headless", *s.Spec.ClusterIP)
	}
	if *s.Spec.Ports[0].Port != 11211 {
		t.Errorf("port = %d", *s.Spec.Ports[0].Port)
	}
}

func TestParseWatchNamespaces(t *testing.T) {
	tests := map[string][]string{
		"":          nil,
		"a":         {"a"},
		"a, b,,c ,": {"a", "b", "c"},
	}
	for in, want := range tests {
		if diff := cmp.Diff(want, ParseWatchNamespaces(in)); diff != "" {
			t.Errorf("ParseWatchNamespaces(%q) (-want +got):\n%s", in, diff)
		}
	}
}
