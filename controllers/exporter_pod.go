package controllers

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
	"github.com/example-inc/memcached-operator/controllers/monitoring"
	"github.com/example-inc/memcached-operator/controllers/operand"
)

// withExporter adds prometheus/memcached_exporter to pod, reading memcached
// on loopback: the plain port, or with TLS memcached's plain-text loopback
// listener, so the exporter needs no certificate of its own.
//
// It has no readiness probe: a pod whose exporter is down still serves its
// clients, and the alert on the missing scrape says so. Its liveness probe
// restarts only the exporter, never memcached.
func withExporter(pod *corev1ac.PodSpecApplyConfiguration, mc *cachev1.Memcached, o Options) {
	port := operand.Port
	if mc.Spec.TLS != nil {
		port = operand.AdminPort
	}
	pod.WithContainers(corev1ac.Container().
		WithName(monitoring.ExporterContainer).
		WithImage(o.ExporterImage).
		WithImagePullPolicy(corev1.PullIfNotPresent).
		WithArgs(
			"--memcached.address=127.0.0.1:"+strconv.Itoa(port),
			"--web.listen-address=:"+strconv.Itoa(monitoring.Port)).
		WithPorts(corev1ac.ContainerPort().
			WithName(monitoring.PortName).
			WithContainerPort(monitoring.Port).
			WithProtocol(corev1.ProtocolTCP)).
		WithLivenessProbe(corev1ac.Probe().
			WithHTTPGet(corev1ac.HTTPGetAction().WithPath("/").WithPort(intstr.FromString(monitoring.PortName))).
			WithPeriodSeconds(30).
			WithTimeoutSeconds(5).
			WithFailureThreshold(3)).
		// A scrape reads four stats commands' answers, a few kilobytes per
		// slab class; the limit keeps a fault in the exporter from taking
		// memcached's memory.
		WithResources(corev1ac.ResourceRequirements().
			WithRequests(corev1.ResourceList{
				corev1.ResourceCPU:    resource.MustParse("5m"),
				corev1.ResourceMemory: resource.MustParse("24Mi"),
			}).
			WithLimits(corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")})).
		WithSecurityContext(containerSecurityContext()))
}
