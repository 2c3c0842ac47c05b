package controllers

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/utils/ptr"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
	"github.com/example-inc/memcached-operator/api/v1/gen"
	"github.com/example-inc/memcached-operator/certs/tlsprofile"
)

func TestDesiredDeploymentTLS(t *testing.T) {
	modern := tlsprofile.Profile{MinVersion: "VersionTLS13", Ciphers: []string{"TLS_AES_128_GCM_SHA256"}}
	tests := []struct {
		name string
		tls  func(*cachev1.MemcachedTLS) // nil: the spec's defaults
		opts Options
		// memcachedGroup: memcached's group reads the key, not the SCC's
		memcachedGroup, clientCA bool
		wantSSL                  string
	}{
		{"Kubernetes: memcached's group reads the key", nil, Options{Platform: PlatformKubernetes}, true, false,
			"ssl_min_version=2,ssl_ciphers=ECDHE-ECDSA-AES128-GCM-SHA256:"},
		{"OpenShift: the SCC's group reads it", nil, Options{Platform: PlatformOpenShift}, false, false, "ssl_min_version=2,ssl_ciphers="},
		{"the cluster's Modern profile, no TLS 1.2 ciphers", nil, Options{TLSProfile: modern}, true, false,
			"ssl_key=/etc/memcached/tls/tls.key,ssl_min_version=3"},
		{"the spec's minimum wins over the profile's", func(t *cachev1.MemcachedTLS) { t.MinVersion = "VersionTLS12" },
			Options{TLSProfile: modern}, true, false, "ssl_min_version=2"},
		{"client certificates", func(t *cachev1.MemcachedTLS) { t.ClientCertificates = cachev1.ClientCertificatesRequired },
			Options{}, true, true, "ssl_ca_cert=/etc/memcached/tls/ca.crt,ssl_verify_mode=2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mc := gen.Memcached("ns", "a", gen.WithTLS("cache-tls"))
			if tt.tls != nil {
				tt.tls(mc.Spec.TLS)
			}
			o := tt.opts
			o.TLSReloaderImage = "reloader:v1"
			pod := desiredDeployment(mc, o.withDefaults(), false).Spec.Template.Spec
			var wantFSGroup *int64
			if tt.memcachedGroup {
				wantFSGroup = ptr.To[int64](memcachedUID)
			}
			wantArgs := []string{"--dir=/etc/memcached/tls", "--secret=cache-tls"}
			if tt.clientCA {
				wantArgs = append(wantArgs, "--client-ca")
			}

			if got := pod.SecurityContext.FSGroup; !cmp.Equal(got, wantFSGroup) {
				t.Errorf("fsGroup = %v, want %v", ptr.Deref(got, -1), ptr.Deref(wantFSGroup, -1))
			}
			want := corev1ac.Volume().WithName("tls").WithSecret(corev1ac.SecretVolumeSource().
				WithSecretName("cache-tls").WithOptional(true).WithDefaultMode(0o440))
			if diff := cmp.Diff([]corev1ac.VolumeApplyConfiguration{*want}, pod.Volumes); diff != "" {
				t.Errorf("volumes (-want +got):\n%s", diff)
			}
			memcached := pod.Containers[0]
			cmd := strings.Join(memcached.Command, " ")
			for _, arg := range []string{"--enable-ssl", "--listen=*,notls:127.0.0.1:11212", tt.wantSSL} {
				if !strings.Contains(cmd, arg) {
					t.Errorf("memcached's command %q lacks %q", cmd, arg)
				}
			}
			if p := memcached.ReadinessProbe; p == nil || p.HTTPGet == nil || *p.HTTPGet.Port != intstr.FromInt32(11213) {
				t.Errorf("memcached's readiness probe %+v: want the sidecar's /readyz by number (the kubelet looks a named port up in memcached's own ports), not a handshake on the TLS port", p)
			}
			mountsTLS := func(c corev1ac.ContainerApplyConfiguration) bool {
				return len(c.VolumeMounts) == 1 && *c.VolumeMounts[0].MountPath == "/etc/memcached/tls" && *c.VolumeMounts[0].ReadOnly
			}
			if len(pod.InitContainers) != 1 || len(pod.Containers) != 2 {
				t.Fatalf("init containers %d, containers %d: want the check and the sidecar", len(pod.InitContainers), len(pod.Containers))
			}
			check, reloader := pod.InitContainers[0], pod.Containers[1]
			if diff := cmp.Diff(append([]string{"check"}, wantArgs...), check.Args); diff != "" {
				t.Errorf("check's args (-want +got):\n%s", diff)
			}
			wantRun := append(append([]string{"run"}, wantArgs...), "--memcached=127.0.0.1:11212", "--health=:11213")
			if diff := cmp.Diff(wantRun, reloader.Args); diff != "" {
				t.Errorf("sidecar's args (-want +got):\n%s", diff)
			}
			for _, c := range []corev1ac.ContainerApplyConfiguration{memcached, check, reloader} {
				if !mountsTLS(c) {
					t.Errorf("container %s does not mount the Secret read-only at /etc/memcached/tls: %+v", *c.Name, c.VolumeMounts)
				}
				if c.SecurityContext == nil || !*c.SecurityContext.ReadOnlyRootFilesystem || !*c.SecurityContext.RunAsNonRoot {
					t.Errorf("container %s has not the restricted security context", *c.Name)
				}
			}
			if *check.Image != "reloader:v1" || *reloader.Image != "reloader:v1" {
				t.Errorf("images %s, %s: want RELATED_IMAGE_TLS_RELOADER's", *check.Image, *reloader.Image)
			}
		})
	}
}

// Turning TLS on changes the pod template (a rollout the webhook warns of);
// a Memcached without TLS keeps the Deployment it had.
func TestDesiredDeploymentWithoutTLSHasNoTLSParts(t *testing.T) {
	pod := desiredDeployment(gen.Memcached("ns", "a"), Options{}.withDefaults(), false).Spec.Template.Spec
	if pod.Volumes != nil || pod.InitContainers != nil || len(pod.Containers) != 1 || pod.SecurityContext.FSGroup != nil {
		t.Errorf("a Memcached without TLS got TLS parts: %+v", pod)
	}
}

func TestDesiredServiceAsksTheServiceCA(t *testing.T) {
	mc := gen.Memcached("ns", "a", gen.WithTLS("cache-tls"))
	if got := desiredService(mc).Annotations[serviceCASecretAnnotation]; got != "" {
		t.Errorf("an External Secret got the service CA's annotation %q", got)
	}
	mc.Spec.TLS.Issuer = cachev1.TLSIssuerOpenShiftServiceCA
	if got := desiredService(mc).Annotations[serviceCASecretAnnotation]; got != "cache-tls" {
		t.Errorf("service CA annotation = %q, want the Secret's name", got)
	}
}

func TestTLSProblem(t *testing.T) {
	failed := func(name string, st corev1.ContainerStatus) corev1.Pod {
		st.Name = "tls-check"
		return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name},
			Status: corev1.PodStatus{InitContainerStatuses: []corev1.ContainerStatus{st}}}
	}
	crashLoop := corev1.ContainerStatus{
		State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
		LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Message: `Secret "cache-tls": tls.crt is missing` + "\n"}},
	}
	passedSince := corev1.ContainerStatus{
		State:                corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0}},
		LastTerminationState: crashLoop.LastTerminationState,
	}
	silent := corev1.ContainerStatus{State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 2}}}
	terminating := failed("a-0", crashLoop)
	terminating.DeletionTimestamp = &metav1.Time{}
	tests := []struct {
		name string
		pods []corev1.Pod
		want string
	}{
		{"no pods", nil, ""},
		{"a check in a crash loop, the first pod by name", []corev1.Pod{failed("a-2", crashLoop), failed("a-1", crashLoop)},
			`Secret "cache-tls": tls.crt is missing (pod a-1)`},
		{"a check that passed since", []corev1.Pod{failed("a-1", passedSince)}, ""},
		{"a check that said nothing", []corev1.Pod{failed("a-1", silent)},
			`the check of Secret "cache-tls" failed with exit code 2 (pod a-1)`},
		{"a terminating pod", []corev1.Pod{terminating}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tlsProblem(gen.Memcached("ns", "a", gen.WithTLS("cache-tls")), tt.pods); got != tt.want {
				t.Errorf("tlsProblem = %q, want %q", got, tt.want)
			}
			// The reconciler reads pods from its cache, which trims them.
			var cached []corev1.Pod
			for _, p := range tt.pods {
				trimmed, err := trimPod(&p)
				if err != nil {
					t.Fatal(err)
				}
				cached = append(cached, *trimmed.(*corev1.Pod))
			}
			if got := tlsProblem(gen.Memcached("ns", "a", gen.WithTLS("cache-tls")), cached); got != tt.want {
				t.Errorf("tlsProblem of the cached pods = %q, want %q", got, tt.want)
			}
		})
	}
	if got := tlsProblem(gen.Memcached("ns", "a"), []corev1.Pod{failed("a-1", crashLoop)}); got != "" {
		t.Errorf("a Memcached without TLS reports %q", got)
	}
	st := desiredStatus(gen.Memcached("ns", "a", gen.WithTLS("cache-tls")), Options{}.withDefaults(), nil,
		[]corev1.Pod{failed("a-1", crashLoop)}, nil)
	i := slices.IndexFunc(st.Conditions, func(c metav1.Condition) bool { return c.Type == cachev1.ConditionDegraded })
	if c := st.Conditions[i]; c.Status != metav1.ConditionTrue || c.Reason != cachev1.ReasonTLSSecretInvalid ||
		c.Message != `Secret "cache-tls": tls.crt is missing (pod a-1)` {
		t.Errorf("Degraded = %+v", c)
	}
}
