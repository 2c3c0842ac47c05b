package controllers

import (
	"errors"
	"fmt"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
	"github.com/example-inc/memcached-operator/controllers/operand"
)

// desiredStatus is mc's status given its Deployment (nil when it does not
// exist yet), the pods that carry its selector labels, and the error of the
// last write, if any. Conditions keep their lastTransitionTime unless their
// status changes, so a status that did not change compares equal.
func desiredStatus(mc *cachev1.Memcached, o Options, d *appsv1.Deployment, pods []corev1.Pod, writeErr error) cachev1.MemcachedStatus {
	want := size(mc, o)
	st := cachev1.MemcachedStatus{
		Nodes:              podNames(pods),
		Selector:           labels.SelectorFromSet(selectorLabels(mc)).String(),
		Endpoint:           endpoint(mc),
		ObservedGeneration: mc.Generation,
		Conditions:         slices.Clone(mc.Status.Conditions),
	}
	if d != nil {
		st.ReadyReplicas = d.Status.ReadyReplicas
	}

	available := metav1.Condition{Type: cachev1.ConditionAvailable, Status: metav1.ConditionFalse,
		Reason: cachev1.ReasonReplicasNotReady, Message: fmt.Sprintf("%d of %s ready", st.ReadyReplicas, podCount(want))}
	if st.ReadyReplicas >= want {
		available.Status, available.Reason = metav1.ConditionTrue, cachev1.ReasonAllReplicasReady
	}

	progressing := metav1.Condition{Type: cachev1.ConditionProgressing, Status: metav1.ConditionFalse,
		Reason: cachev1.ReasonRolloutComplete, Message: podCount(want) + " up to date"}
	switch {
	case d == nil || d.Status.Replicas != want:
		progressing.Status, progressing.Reason = metav1.ConditionTrue, cachev1.ReasonScaling
		progressing.Message = "scaling to " + podCount(want)
	case !deploymentRolledOut(d, want):
		progressing.Status, progressing.Reason = metav1.ConditionTrue, cachev1.ReasonRollingOut
		progressing.Message = fmt.Sprintf("%d of %s up to date", d.Status.UpdatedReplicas, podCount(want))
	}

	degraded := metav1.Condition{Type: cachev1.ConditionDegraded, Status: metav1.ConditionFalse,
		Reason: cachev1.ReasonReconciled, Message: "all objects applied"}
	var blocked *blockedError
	switch {
	case errors.As(writeErr, &blocked):
		degraded.Status, degraded.Reason, degraded.Message = metav1.ConditionTrue, blocked.reason, blocked.message
	case writeErr != nil:
		degraded.Status, degraded.Reason, degraded.Message = metav1.ConditionTrue, cachev1.ReasonReconcileFailed, writeErr.Error()
	default:
		if problem := tlsProblem(mc, pods); problem != "" {
			degraded.Status, degraded.Reason, degraded.Message = metav1.ConditionTrue, cachev1.ReasonTLSSecretInvalid, problem
		}
	}

	for _, c := range []metav1.Condition{available, progressing, degraded} {
		c.ObservedGeneration = mc.Generation
		meta.SetStatusCondition(&st.Conditions, c)
	}
	return st
}

// settled reports whether st is where a rollout ends: every pod ready and
// up to date, or a failure to report.
func settled(st cachev1.MemcachedStatus) bool {
	return meta.IsStatusConditionTrue(st.Conditions, cachev1.ConditionDegraded) ||
		(meta.IsStatusConditionTrue(st.Conditions, cachev1.ConditionAvailable) &&
			meta.IsStatusConditionFalse(st.Conditions, cachev1.ConditionProgressing))
}

// urgent reports whether the change from old to st must be written at once
// rather than paced: a settled status or a failure, or a loss of ready pods.
// Only progress towards the goal (pods coming up) waits; a pod that stops
// serving is news.
func urgent(old, st cachev1.MemcachedStatus) bool {
	return settled(st) || st.ReadyReplicas < old.ReadyReplicas
}

// podNames lists the pods that serve or will serve: terminating and finished
// pods are on their way out and no client should be sent to them.
func podNames(pods []corev1.Pod) []string {
	var names []string
	for _, p := range pods {
		if p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		names = append(names, p.Name)
	}
	slices.Sort(names)
	return names
}

// podCount is "1 pod" or "n pods".
func podCount(n int32) string {
	if n == 1 {
		return "1 pod"
	}
	return fmt.Sprintf("%d pods", n)
}

// endpoint is the Service's name as pods resolve it, with memcached's port.
// The ".svc" form needs no cluster domain, which clusters may rename.
func endpoint(mc *cachev1.Memcached) string {
	return fmt.Sprintf("%s.%s.svc:%d", mc.Name, mc.Namespace, operand.Port)
}
