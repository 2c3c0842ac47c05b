package controllers

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
	"github.com/example-inc/memcached-operator/controllers/operand"
)

// The parts of a pod that serves TLS, beside memcached's own options.
const (
	tlsVolume = "tls"
	// tlsCheckContainer checks the Secret's files before memcached starts;
	// when they are unusable it ends with a termination message naming the
	// Secret and the problem, which the status reports.
	tlsCheckContainer = "tls-check"
	// tlsReloaderContainer has memcached reload a renewed certificate, and
	// answers the readiness probe.
	tlsReloaderContainer = "tls-reloader"
	tlsHealthPortName    = "tls-health"
)

// withTLS adds to pod what serving TLS takes: the Secret as a read-only
// volume, the check before memcached starts, and the sidecar that reloads a
// renewed certificate in place, so that a renewal restarts nothing.
//
// The volume is optional: a missing Secret then leaves the directory empty
// and the check says so in the status, where a required one would hold the
// pod in ContainerCreating with nothing said on the Memcached. The files
// are readable by the pod's group only (0440): on Kubernetes that group is
// memcached's, given as fsGroup; OpenShift's restricted-v2 assigns one.
func withTLS(pod *corev1ac.PodSpecApplyConfiguration, mc *cachev1.Memcached, o Options) {
	pod.WithVolumes(corev1ac.Volume().WithName(tlsVolume).WithSecret(corev1ac.SecretVolumeSource().
		WithSecretName(mc.Spec.TLS.SecretName).
		WithOptional(true).
		WithDefaultMode(0o440)))
	if o.Platform != PlatformOpenShift {
		pod.SecurityContext.WithFSGroup(memcachedUID)
	}
	mount := corev1ac.VolumeMount().WithName(tlsVolume).WithMountPath(operand.TLSDir).WithReadOnly(true)
	memcached := &pod.Containers[0]
	memcached.WithVolumeMounts(mount).
		WithReadinessProbe(corev1ac.Probe().
			// By number: the kubelet looks a probe's named port up in the
			// probed container's own ports, and this one is the sidecar's.
			WithHTTPGet(corev1ac.HTTPGetAction().WithPath("/readyz").WithPort(intstr.FromInt32(operand.HealthPort))).
			WithPeriodSeconds(5).
			WithTimeoutSeconds(2).
			WithFailureThreshold(3))

	args := []string{"--dir=" + operand.TLSDir, "--secret=" + mc.Spec.TLS.SecretName}
	if mc.Spec.TLS.ClientCertificates == cachev1.ClientCertificatesRequired {
		args = append(args, "--client-ca")
	}
	pod.WithInitContainers(tlsContainer(tlsCheckContainer, o, mount, append([]string{"check"}, args...)))
	pod.WithContainers(tlsContainer(tlsReloaderContainer, o, mount, append([]string{"run"}, append(args,
		"--memcached=127.0.0.1:"+strconv.Itoa(operand.AdminPort),
		"--health=:"+strconv.Itoa(operand.HealthPort))...)).
		WithPorts(corev1ac.ContainerPort().
			WithName(tlsHealthPortName).
			WithContainerPort(operand.HealthPort).
			WithProtocol(corev1.ProtocolTCP)))
}

// tlsContainer runs the TLS sidecar's image with args. Its resources are
// fixed: it reads a few files every two seconds and answers a probe, and
// its memory limit keeps a fault in it from taking memcached's memory.
func tlsContainer(name string, o Options, mount *corev1ac.VolumeMountApplyConfiguration, args []string) *corev1ac.ContainerApplyConfiguration {
	return corev1ac.Container().
		WithName(name).
		WithImage(o.TLSReloaderImage).
		WithImagePullPolicy(corev1.PullIfNotPresent).
		WithArgs(args...).
		WithVolumeMounts(mount).
		WithResources(corev1ac.ResourceRequirements().
			WithRequests(corev1.ResourceList{
				corev1.ResourceCPU:    resource.MustParse("5m"),
				corev1.ResourceMemory: resource.MustParse("16Mi"),
			}).
			WithLimits(corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("32Mi")})).
		WithTerminationMessagePolicy(corev1.TerminationMessageReadFile).
		WithSecurityContext(containerSecurityContext())
}

// tlsProblem is what the TLS check of the first of pods still held by it
// said, with the pod's name; "" when no pod's check failed. The check's
// message names the Secret and what is wrong with it. A pod whose check
// has since passed is past the problem.
func tlsProblem(mc *cachev1.Memcached, pods []corev1.Pod) string {
	if mc.Spec.TLS == nil {
		return ""
	}
	for _, p := range sortedByName(pods) {
		if p.DeletionTimestamp != nil {
			continue
		}
		for _, s := range p.Status.InitContainerStatuses {
			if s.Name != tlsCheckContainer || (s.State.Terminated != nil && s.State.Terminated.ExitCode == 0) {
				continue
			}
			t := s.State.Terminated
			if t == nil {
				t = s.LastTerminationState.Terminated
			}
			if t == nil || t.ExitCode == 0 {
				continue
			}
			msg := strings.TrimSpace(t.Message)
			if msg == "" {
				msg = fmt.Sprintf("the check of Secret %q failed with exit code %d", mc.Spec.TLS.SecretName, t.ExitCode)
			}
			return fmt.Sprintf("%s (pod %s)", msg, p.Name)
		}
	}
	return ""
}

func sortedByName(pods []corev1.Pod) []corev1.Pod {
	out := slices.Clone(pods)
	slices.SortFunc(out, func(a, b corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
	return out
}
