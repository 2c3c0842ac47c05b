package controllers

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
	"github.com/example-inc/memcached-operator/test/framework/gen"
)

func deploymentStatus(generation, observed int64, replicas, updated, ready int32) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Generation: generation},
		Status: appsv1.DeploymentStatus{ObservedGeneration: observed, Replicas: replicas,
			UpdatedReplicas: updated, ReadyReplicas: ready},
	}
}

func pod(name string, phase corev1.PodPhase, deleting bool) corev1.Pod {
	p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.PodStatus{Phase: phase}}
	if deleting {
		p.DeletionTimestamp = ptr.To(metav1.Now())
	}
	return p
}

func TestDesiredStatus(t *testing.T) {
	type conds struct{ available, progressing, degraded string }
	tests := []struct {
		name      string
		d         *appsv1.Deployment
		pods      []corev1.Pod
		err       error
		want      conds
		wantNodes []string
		// settled: the status is written at once, not paced.
		settled bool
	}{
		{name: "no deployment yet", want: conds{cachev1.ReasonReplicasNotReady, cachev1.ReasonScaling, cachev1.ReasonReconciled}},
		{name: "all ready", d: deploymentStatus(1, 1, 3, 3, 3),
			pods: []corev1.Pod{pod("m-c", corev1.PodRunning, false), pod("m-a", corev1.PodRunning, false), pod("m-b", corev1.PodPending, false)},
			want: conds{cachev1.ReasonAllReplicasReady, cachev1.ReasonRolloutComplete, cachev1.ReasonReconciled}, wantNodes: []string{"m-a", "m-b", "m-c"},
			settled: true},
		{name: "rolling out", d: deploymentStatus(2, 2, 3, 1, 3),
			want: conds{cachev1.ReasonAllReplicasReady, cachev1.ReasonRollingOut, cachev1.ReasonReconciled}},
		{name: "template change not yet observed", d: deploymentStatus(3, 2, 3, 3, 3),
			want: conds{cachev1.ReasonAllReplicasReady, cachev1.ReasonRollingOut, cachev1.ReasonReconciled}},
		{name: "scaling", d: deploymentStatus(1, 1, 2, 2, 2),
			want: conds{cachev1.ReasonReplicasNotReady, cachev1.ReasonScaling, cachev1.ReasonReconciled}},
		{name: "write failed", d: deploymentStatus(1, 1, 3, 3, 3), err: errors.New("boom"),
			want:    conds{cachev1.ReasonAllReplicasReady, cachev1.ReasonRolloutComplete, cachev1.ReasonReconcileFailed},
			settled: true},
		{name: "blocked: the reason is the block's, wrapped or not", d: deploymentStatus(1, 1, 3, 3, 3),
			err:     fmt.Errorf("applying: %w", &blockedError{reason: cachev1.ReasonNameInUse, message: "taken"}),
			want:    conds{cachev1.ReasonAllReplicasReady, cachev1.ReasonRolloutComplete, cachev1.ReasonNameInUse},
			settled: true},
		{name: "terminating and finished pods are not nodes", d: deploymentStatus(1, 1, 3, 3, 3),
			pods: []corev1.Pod{pod("m-a", corev1.PodRunning, true), pod("m-b", corev1.PodSucceeded, false), pod("m-c", corev1.PodFailed, false), pod("m-d", corev1.PodRunning, false)},
			want: conds{cachev1.ReasonAllReplicasReady, cachev1.ReasonRolloutComplete, cachev1.ReasonReconciled}, wantNodes: []string{"m-d"},
			settled: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mc := gen.Memcached("ns", "m", gen.WithSize(3), gen.WithGeneration(2))
			st := desiredStatus(mc, Options{}, tt.d, tt.pods, tt.err)
			got := conds{
				meta.FindStatusCondition(st.Conditions, cachev1.ConditionAvailable).Reason,
				meta.FindStatusCondition(st.Conditions, cachev1.ConditionProgressing).Reason,
				meta.FindStatusCondition(st.Conditions, cachev1.ConditionDegraded).Reason,
			}
			if got != tt.want {
				t.Errorf("reasons = %+v, want %+v", got, tt.want)
			}
			if got := settled(st); got != tt.settled {
				t.Errorf("settled = %v, want %v", got, tt.settled)
			}
			if diff := cmp.Diff(tt.wantNodes, st.Nodes); diff != "" {
				t.Errorf("nodes (-want +got):\n%s", diff)
			}
			if st.ObservedGeneration != 2 || st.Selector != "app.kubernetes.io/instance=m,app.kubernetes.io/name=memcached" {
				t.Errorf("observedGeneration %d, selector %q", st.ObservedGeneration, st.Selector)
			}
		})
	}
}

// A status computed twice from the same inputs must compare equal, or every
// reconcile would write it.
func TestDesiredStatusIsStable(t *testing.T) {
	mc := gen.Memcached("ns", "m", gen.WithSize(3))
	d := deploymentStatus(1, 1, 3, 3, 3)
	mc.Status = desiredStatus(mc, Options{}, d, nil, nil)
	for i := range mc.Status.Conditions {
		mc.Status.Conditions[i].LastTransitionTime = metav1.NewTime(time.Now().Add(-time.Hour).Truncate(time.Second))
	}
	again := desiredStatus(mc, Options{}, d, nil, nil)
	if diff := cmp.Diff(mc.Status, again); diff != "" {
		t.Fatalf("status changed without a cause (-first +second):\n%s", diff)
	}
}

func TestUrgent(t *testing.T) {
	ready := func(n int32, settled bool) cachev1.MemcachedStatus {
		mc := gen.Memcached("ns", "m", gen.WithSize(3))
		d := deploymentStatus(1, 1, 3, 3, n)
		if !settled {
			d = deploymentStatus(1, 1, 3, 2, n)
		}
		return desiredStatus(mc, Options{}, d, nil, nil)
	}
	tests := []struct {
		name     string
		old, new cachev1.MemcachedStatus
		want     bool
	}{
		{"progress waits", ready(1, false), ready(2, false), false},
		{"settling is written at once", ready(2, false), ready(3, true), true},
		{"a pod that stops being ready is written at once", ready(3, true), ready(2, true), true},
		{"a failure is written at once", ready(3, true),
			desiredStatus(gen.Memcached("ns", "m", gen.WithSize(3)), Options{}, deploymentStatus(1, 1, 3, 3, 3), nil, errors.New("boom")), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := urgent(tt.old, tt.new); got != tt.want {
				t.Errorf("urgent = %v, want %v (old ready %d, new ready %d)", got, tt.want, tt.old.ReadyReplicas, tt.new.ReadyReplicas)
			}
		})
	}
}
