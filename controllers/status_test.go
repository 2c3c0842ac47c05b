package controllers

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
	"github.com/example-inc/memcached-operator/api/v1/gen"
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

// conditions are a status's Available, Progressing and Degraded
// conditions, each as (status, reason, message), of generation 2.
func conditions(available, progressing, degraded [3]string) []metav1.Condition {
	var out []metav1.Condition
	for i, c := range [][3]string{available, progressing, degraded} {
		out = append(out, metav1.Condition{
			Type:   []string{cachev1.ConditionAvailable, cachev1.ConditionProgressing, cachev1.ConditionDegraded}[i],
			Status: metav1.ConditionStatus(c[0]), Reason: c[1], Message: c[2], ObservedGeneration: 2,
		})
	}
	return out
}

func TestDesiredStatus(t *testing.T) {
	const yes, no = "True", "False"
	reconciled := [3]string{no, cachev1.ReasonReconciled, "all objects applied"}
	complete := [3]string{no, cachev1.ReasonRolloutComplete, "3 pods up to date"}
	allReady := [3]string{yes, cachev1.ReasonAllReplicasReady, "3 of 3 pods ready"}
	tests := []struct {
		name      string
		d         *appsv1.Deployment
		pods      []corev1.Pod
		err       error
		want      []metav1.Condition
		wantReady int32
		wantNodes []string
		// settled: the status is written at once, not paced.
		settled bool
	}{
		{name: "no deployment yet", want: conditions(
			[3]string{no, cachev1.ReasonReplicasNotReady, "0 of 3 pods ready"},
			[3]string{yes, cachev1.ReasonScaling, "scaling to 3 pods"},
			reconciled)},
		{name: "all ready", d: deploymentStatus(1, 1, 3, 3, 3),
			pods:      []corev1.Pod{pod("m-c", corev1.PodRunning, false), pod("m-a", corev1.PodRunning, false), pod("m-b", corev1.PodPending, false)},
			want:      conditions(allReady, complete, reconciled),
			wantReady: 3, wantNodes: []string{"m-a", "m-b", "m-c"}, settled: true},
		{name: "rolling out", d: deploymentStatus(2, 2, 3, 1, 3), want: conditions(
			allReady, [3]string{yes, cachev1.ReasonRollingOut, "1 of 3 pods up to date"}, reconciled),
			wantReady: 3},
		{name: "template change not yet observed", d: deploymentStatus(3, 2, 3, 3, 3), want: conditions(
			allReady, [3]string{yes, cachev1.ReasonRollingOut, "3 of 3 pods up to date"}, reconciled),
			wantReady: 3},
		{name: "scaling", d: deploymentStatus(1, 1, 2, 2, 2), want: conditions(
			[3]string{no, cachev1.ReasonReplicasNotReady, "2 of 3 pods ready"},
			[3]string{yes, cachev1.ReasonScaling, "scaling to 3 pods"}, reconciled),
			wantReady: 2},
		{name: "write failed", d: deploymentStatus(1, 1, 3, 3, 3), err: errors.New("boom"), want: conditions(
			allReady, complete, [3]string{yes, cachev1.ReasonReconcileFailed, "boom"}),
			wantReady: 3, settled: true},
		{name: "blocked: the reason is the block's, wrapped or not", d: deploymentStatus(1, 1, 3, 3, 3),
			err: fmt.Errorf("applying: %w", &blockedError{reason: cachev1.ReasonNameInUse, message: "taken"}), want: conditions(
				allReady, complete, [3]string{yes, cachev1.ReasonNameInUse, "taken"}),
			wantReady: 3, settled: true},
		{name: "terminating and finished pods are not nodes", d: deploymentStatus(1, 1, 3, 3, 3),
			pods: []corev1.Pod{pod("m-a", corev1.PodRunning, true), pod("m-b", corev1.PodSucceeded, false), pod("m-c", corev1.PodFailed, false), pod("m-d", corev1.PodRunning, false)},
			want: conditions(allReady, complete, reconciled), wantReady: 3, wantNodes: []string{"m-d"}, settled: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mc := gen.Memcached("ns", "m", gen.WithSize(3), gen.WithGeneration(2))
			st := desiredStatus(mc, Options{}, tt.d, tt.pods, tt.err)
			want := cachev1.MemcachedStatus{
				ReadyReplicas:      tt.wantReady,
				Nodes:              tt.wantNodes,
				Selector:           "app.kubernetes.io/instance=m,app.kubernetes.io/name=memcached",
				Endpoint:           "m.ns.svc:11211",
				ObservedGeneration: 2,
				Conditions:         tt.want,
			}
			if diff := cmp.Diff(want, st, cmpopts.IgnoreFields(metav1.Condition{}, "LastTransitionTime")); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
			if got := settled(st); got != tt.settled {
				t.Errorf("settled = %v, want %v", got, tt.settled)
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
