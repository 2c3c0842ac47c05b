package controllers

import (
	"encoding/json"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
	"github.com/example-inc/memcached-operator/controllers/operand"
	"github.com/example-inc/memcached-operator/controllers/proxyenv"
)

const (
	containerName = "memcached"
	portName      = "memcached"
)

// WarmCondition is the pod condition the operator sets once a pod is warm
// (see paceRollout); the pods carry it as a readiness gate, so that a
// rollout stops the next old pod only then.
const WarmCondition corev1.PodConditionType = "cache.example.com/warm"

// desiredDeployment is the Deployment that runs mc's memcached pods: every
// field here is owned by the operator and returns after a hand edit. With
// warmGate its pods wait for WarmCondition to be ready.
func desiredDeployment(mc *cachev1.Memcached, o Options, warmGate bool) *appsv1ac.DeploymentApplyConfiguration {
	pod := corev1ac.PodSpec().
		WithSecurityContext(podSecurityContext(o.Platform)).
		WithContainers(memcachedContainer(mc, o)).
		WithNodeSelector(mc.Spec.NodeSelector)
	if warmGate {
		pod.WithReadinessGates(corev1ac.PodReadinessGate().WithConditionType(WarmCondition))
	}
	if mc.Spec.TLS != nil {
		withTLS(pod, mc, o)
	}
	if mc.Spec.Monitoring.IsEnabled() {
		withExporter(pod, mc, o)
	}
	// Placement is copied as the spec gives it: the defaulting webhook has
	// written the default spread into a spec without placement. Fields the
	// spec leaves empty stay out, so the Deployment of a Memcached without
	// placement is the one it had before placement existed.
	if mc.Spec.PriorityClassName != "" {
		pod.WithPriorityClassName(mc.Spec.PriorityClassName)
	}
	for i := range mc.Spec.Tolerations {
		pod.WithTolerations(applyConfiguration[corev1ac.TolerationApplyConfiguration](&mc.Spec.Tolerations[i]))
	}
	if mc.Spec.Affinity != nil {
		pod.WithAffinity(applyConfiguration[corev1ac.AffinityApplyConfiguration](mc.Spec.Affinity))
	}
	for i := range mc.Spec.TopologySpreadConstraints {
		pod.WithTopologySpreadConstraints(
			applyConfiguration[corev1ac.TopologySpreadConstraintApplyConfiguration](&mc.Spec.TopologySpreadConstraints[i]))
	}
	d := appsv1ac.Deployment(mc.Name, mc.Namespace).
		WithLabels(objectLabels(mc)).
		WithOwnerReferences(ownerReference(mc)).
		WithSpec(appsv1ac.DeploymentSpec().
			WithReplicas(size(mc, o)).
			WithSelector(metav1ac.LabelSelector().WithMatchLabels(selectorLabels(mc))).
			WithStrategy(oneAtATime()).
			WithTemplate(corev1ac.PodTemplateSpec().
				WithLabels(objectLabels(mc)).
				WithSpec(pod)))
	return d.WithAnnotations(desiredHash(d))
}

// oneAtATime replaces a Memcached's pods one at a time, the new pod ready
// before an old one stops. Kubernetes' default (25% unavailable, 25% surge)
// stops a quarter of the pods at once from size 4 up, and a quarter of the
// cache with them; a PodDisruptionBudget does not hold a Deployment's own
// rollout back. One surge pod needs room for one more pod, and a new pod that
// never becomes ready stalls the rollout with every old pod still serving.
func oneAtATime() *appsv1ac.DeploymentStrategyApplyConfiguration {
	return appsv1ac.DeploymentStrategy().
		WithType(appsv1.RollingUpdateDeploymentStrategyType).
		WithRollingUpdate(appsv1ac.RollingUpdateDeployment().
			WithMaxUnavailable(intstr.FromInt32(0)).
			WithMaxSurge(intstr.FromInt32(1)))
}

// memcachedContainer runs memcached with the settings of mc's spec. The
// command is proven against real memcached (controllers/operand's table test
// and test/e2e).
func memcachedContainer(mc *cachev1.Memcached, o Options) *corev1ac.ContainerApplyConfiguration {
	settings := operand.FromSpec(&mc.Spec)
	settings.TLS = operand.TLSFromSpec(&mc.Spec, o.TLSProfile)
	resources := operand.ContainerResources(&mc.Spec)
	c := corev1ac.Container().
		WithName(containerName).
		WithImage(o.Image).
		WithImagePullPolicy(corev1.PullIfNotPresent).
		WithCommand(operand.Command(settings)...).
		WithPorts(corev1ac.ContainerPort().
			WithName(portName).
			WithContainerPort(operand.Port).
			WithProtocol(corev1.ProtocolTCP)).
		WithReadinessProbe(tcpProbe().WithPeriodSeconds(5)).
		WithLivenessProbe(tcpProbe().WithInitialDelaySeconds(10).WithPeriodSeconds(10)).
		WithResources(applyConfiguration[corev1ac.ResourceRequirementsApplyConfiguration](&resources)).
		WithSecurityContext(containerSecurityContext())
	for _, e := range proxyenv.Merge(nil, o.ProxyEnv) {
		c = c.WithEnv(corev1ac.EnvVar().WithName(e.Name).WithValue(e.Value))
	}
	return c
}

// applyConfiguration converts a core API value into its apply configuration,
// which has the same JSON form.
func applyConfiguration[AC any](v any) *AC {
	data, err := json.Marshal(v)
	if err != nil {
		// Not reached: API types are plain data.
		panic(err)
	}
	ac := new(AC)
	if err := json.Unmarshal(data, ac); err != nil {
		panic(err)
	}
	return ac
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

// hasWarmGate reports whether d's pods wait for WarmCondition.
func hasWarmGate(d *appsv1.Deployment) bool {
	return slices.ContainsFunc(d.Spec.Template.Spec.ReadinessGates, func(g corev1.PodReadinessGate) bool {
		return g.ConditionType == WarmCondition
	})
}

// deploymentRolledOut reports whether d's controller has brought every pod
// to d's current template and replica count.
func deploymentRolledOut(d *appsv1.Deployment, want int32) bool {
	return d.Status.ObservedGeneration >= d.Generation &&
		d.Status.UpdatedReplicas == want &&
		d.Status.Replicas == want
}
