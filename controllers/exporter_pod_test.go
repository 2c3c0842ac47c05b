package controllers

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	"github.com/example-inc/memcached-operator/api/v1/gen"
)

func TestDesiredDeploymentExporter(t *testing.T) {
	tests := []struct {
		name string
		opts []gen.MemcachedOption
		// wantAddress is the exporter's --memcached.address, "" for no
		// exporter.
		wantAddress    string
		wantContainers []string
	}{
		{name: "stored before monitoring: no exporter", wantContainers: []string{"memcached"}},
		{name: "off", opts: []gen.MemcachedOption{gen.WithMonitoring(false)}, wantContainers: []string{"memcached"}},
		{name: "on: memcached's port on loopback", opts: []gen.MemcachedOption{gen.WithMonitoring(true)},
			wantAddress: "127.0.0.1:11211", wantContainers: []string{"memcached", "exporter"}},
		{name: "on with TLS: memcached's plain-text loopback listener",
			opts:        []gen.MemcachedOption{gen.WithMonitoring(true), gen.WithTLS("cache-tls")},
			wantAddress: "127.0.0.1:11212", wantContainers: []string{"memcached", "tls-reloader", "exporter"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mc := gen.Memcached("ns", "a", tt.opts...)
			pod := desiredDeployment(mc, Options{ExporterImage: "exporter:v1"}.withDefaults(), false).Spec.Template.Spec
			var names []string
			for _, c := range pod.Containers {
				names = append(names, *c.Name)
			}
			if diff := cmp.Diff(tt.wantContainers, names); diff != "" {
				t.Fatalf("containers (-want +got):\n%s", diff)
			}
			if tt.wantAddress == "" {
				return
			}
			c := pod.Containers[len(pod.Containers)-1]
			if want := []string{"--memcached.address=" + tt.wantAddress, "--web.listen-address=:9150"}; !cmp.Equal(c.Args, want) {
				t.Errorf("args = %q, want %q", c.Args, want)
			}
			if *c.Image != "exporter:v1" {
				t.Errorf("image = %s, want RELATED_IMAGE_MEMCACHED_EXPORTER's", *c.Image)
			}
			if p := c.Ports[0]; *p.Name != "metrics" || *p.ContainerPort != 9150 {
				t.Errorf("port = %s/%d, want metrics/9150, which the PodMonitor scrapes", *p.Name, *p.ContainerPort)
			}
			if c.ReadinessProbe != nil {
				t.Error("the exporter has a readiness probe: a pod would stop serving its clients when the exporter is down")
			}
			if !ptr.Deref(c.SecurityContext.ReadOnlyRootFilesystem, false) || !ptr.Deref(c.SecurityContext.RunAsNonRoot, false) {
				t.Error("the exporter's security context is not the restricted one")
			}
		})
	}
}
