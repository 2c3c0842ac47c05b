package controllers

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
	"github.com/example-inc/memcached-operator/controllers/proxyenv"
)

const (
	containerName = "memcached"
	portName      = "memcached"
	memcachedPort = 11211
)

// memcachedCommand caps the item memory at 64 MiB; the container's memory
// request and limit below leave room for connections and the hash table.
// Long options with "=" only: memcached's getopt takes "-m=64" as the value
// "=64", which atoi reads as 0 MiB, and memcached refuses to start. The
// command is proven against real memcached on the local cluster's real node
// (test/node).
var memcachedCommand = []string{"memcached", "--port=11211", "--memory-limit=64", "--extended=modern", "--verbose"}

// desiredDeployment is the Deployment that runs mc's memcached pods: every
// field here is owned by the operator and returns after a hand edit.
func desiredDeployment(mc *cachev1.Memcached, o Options) *appsv1ac.DeploymentApplyConfiguration {
	d := appsv1ac.Deployment(mc.Name, mc.Namespace).
		WithLabels(objectLabels(mc)).
		WithOwnerReferences(ownerReference(mc)).
		WithSpec(appsv1ac.DeploymentSpec().
			WithReplicas(size(mc, o)).
			WithSelector(metav1ac.LabelSelector().WithMatchLabels(selectorLabels(mc))).
			WithTemplate(corev1ac.PodTemplateSpec().
				WithLabels(objectLabels(mc)).
				WithSpec(corev1ac.PodSpec().
					WithSecurityContext(podSecurityContext(o.Platform)).
					WithContainers(memcachedContainer(o)))))
	return d.WithAnnotations(desiredHash(d))
}

func memcachedContainer(o Options) *corev1ac.ContainerApplyConfiguration {
	c := corev1ac.Container().
		WithName(containerName).
		WithImage(o.Image).
		WithImagePullPolicy(corev1.PullIfNotPresent).
		WithCommand(memcachedCommand...).
		WithPorts(corev1ac.ContainerPort().
			WithName(portName).
			WithContainerPort(memcachedPort).
			WithProtocol(corev1.ProtocolTCP)).
		WithReadinessProbe(tcpProbe().WithPeriodSeconds(5)).
		WithLivenessProbe(tcpProbe().WithInitialDelaySeconds(10).WithPeriodSeconds(10)).
		WithResources(corev1ac.ResourceRequirements().
			WithRequests(corev1.ResourceList{
				corev1.ResourceCPU:    resource.MustParse("50m"),
				corev1.ResourceMemory: resource.MustParse("96Mi"),
			}).
			WithLimits(corev1.ResourceList{
				corev1.ResourceCPU:    resource.MustParse("500m"),
				corev1.ResourceMemory: resource.MustParse("128Mi"),
			})).
		WithSecurityContext(containerSecurityContext())
	for _, e := range proxyenv.Merge(nil, o.ProxyEnv) {
		c = c.WithEnv(corev1ac.EnvVar().WithName(e.Name).WithValue(e.Value))
	}
	return c
}

func tcpProbe() *corev1ac.ProbeApplyConfiguration {
	return corev1ac.Probe().
		WithTCPSocket(corev1ac.TCPSocketAction().WithPort(intstr.FromString(portName))).
		WithTimeoutSeconds(1).
		WithFailureThreshold(3)
}

// size is the number of pods mc asks for. A Memcached without a size reaches
// the reconciler only if the defaulting webhook did not run.
func size(mc *cachev1.Memcached, o Options) int32 {
	if mc.Spec.Size != nil {
		return *mc.Spec.Size
	}
	return o.DefaultSize
}

// ownerReference makes mc the controller of an object, so deleting mc
// removes it and changes to it wake mc's reconciler.
func ownerReference(mc *cachev1.Memcached) *metav1ac.OwnerReferenceApplyConfiguration {
	return metav1ac.OwnerReference().
		WithAPIVersion(cachev1.GroupVersion.String()).
		WithKind("Memcached").
		WithName(mc.Name).
		WithUID(mc.UID).
		WithController(true).
		WithBlockOwnerDeletion(true)
}

// deploymentRolledOut reports whether d's controller has brought every pod
// to d's current template and replica count.
func deploymentRolledOut(d *appsv1.Deployment, want int32) bool {
	return d.Status.ObservedGeneration >= d.Generation &&
		d.Status.UpdatedReplicas == want &&
		d.Status.Replicas == want
}
