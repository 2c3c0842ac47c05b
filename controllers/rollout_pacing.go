package controllers

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
	"github.com/example-inc/memcached-operator/controllers/operand"
	"github.com/example-inc/memcached-operator/controllers/warmup"
)

// Reasons of a pod's WarmCondition; the first two are also the reasons of
// the Memcached's events.
const (
	eventPodWarm        = "PodWarm"
	eventWarmupTimedOut = "WarmupTimedOut"
	// reasonNotMeasured: the operator reads no counters (--warmup-interval
	// 0), or cannot (the pod serves TLS).
	reasonNotMeasured     = "WarmupNotMeasured"
	reasonPacingOff       = "PacingOff"
	reasonNothingReplaced = "NothingReplaced"
)

// Defaults of spec.rollout, documented on MemcachedRollout.
const (
	defaultItemsPercent   = 50
	defaultHitRatioPoints = 5
	defaultWarmupTimeout  = 10 * time.Minute
	// statsTimeout bounds one read of a pod's counters.
	statsTimeout = 2 * time.Second
)

// warming is the pod a rollout waits for, and why, for the Warming
// condition.
type warming struct {
	pod, why string
	until    time.Time
}

// warmupRounds keeps, per Memcached and warming pod, the last round of
// reads: the pod's counters and its peers', the start of the window over
// which the next round judges it. Reconciles of different Memcached run at
// once.
type warmupRounds struct {
	mu     sync.Mutex
	rounds map[types.NamespacedName]map[types.UID]warmupRound
}

type warmupRound struct {
	at    time.Time
	stats map[types.UID]warmup.Stats
	// why is the verdict of the window that ended with this round, of a
	// whole window when judged.
	why    string
	judged bool
}

func newWarmupRounds() *warmupRounds {
	return &warmupRounds{rounds: map[types.NamespacedName]map[types.UID]warmupRound{}}
}

func (s *warmupRounds) get(key types.NamespacedName, pod types.UID) (warmupRound, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.rounds[key][pod]
	return r, ok
}

func (s *warmupRounds) put(key types.NamespacedName, pod types.UID, r warmupRound) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.rounds[key] == nil {
		s.rounds[key] = map[types.UID]warmupRound{}
	}
	s.rounds[key][pod] = r
}

// forget drops key's rounds: no pod of it warms.
func (s *warmupRounds) forget(key types.NamespacedName) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.rounds, key)
}

// paceRollout marks each of mc's gated pods warm (WarmCondition) once it is,
// which makes it ready, and returns the pod the rollout waits for, if any.
// A pod is held only while a pod of an older template still runs, that is
// while a rollout replaces pods: a first start, a scale up or a deleted
// pod's replacement is marked warm as soon as its containers are.
func (r *MemcachedReconciler) paceRollout(ctx context.Context, mc *cachev1.Memcached, pods []corev1.Pod) (*warming, error) {
	var peers, cold []*corev1.Pod
	for i := range pods {
		p := &pods[i]
		switch {
		case p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodRunning:
		case hasPodGate(p) && !podCondition(p, WarmCondition):
			cold = append(cold, p)
		case podCondition(p, corev1.ContainersReady):
			peers = append(peers, p)
		}
	}
	var waiting *warming
	defer func() {
		if waiting == nil {
			r.warmups.forget(client.ObjectKeyFromObject(mc))
		}
	}()
	for _, p := range cold {
		if !podCondition(p, corev1.ContainersReady) {
			// Its ContainersReady change brings the next reconcile.
			continue
		}
		reason, why := r.judgeWarmth(ctx, mc, p, peers, pods)
		if reason == "" {
			if waiting == nil {
				waiting = &warming{pod: p.Name, why: why, until: containersReadySince(p).Add(warmupTimeout(mc))}
			}
			continue
		}
		if err := r.markWarm(ctx, p, reason, why); err != nil {
			return nil, err
		}
		switch reason {
		case eventPodWarm:
			r.recorder.Eventf(mc, p, corev1.EventTypeNormal, eventPodWarm, "Warmup", "pod %s is warm: %s", p.Name, why)
		case eventWarmupTimedOut:
			r.recorder.Eventf(mc, p, corev1.EventTypeWarning, eventWarmupTimedOut, "Warmup", "pod %s is not warm after %s, and the rollout goes on: %s",
				p.Name, warmupTimeout(mc), why)
		}
	}
	return waiting, nil
}

// judgeWarmth returns the reason to mark p warm with (empty while it must
// wait) and why. A pod past the warm-up timeout is judged once more first:
// an operator that was down meanwhile finds it warm rather than late.
func (r *MemcachedReconciler) judgeWarmth(ctx context.Context, mc *cachev1.Memcached, p *corev1.Pod, peers []*corev1.Pod, pods []corev1.Pod) (string, string) {
	rollout := mc.Spec.Rollout
	switch {
	case r.opts.Warmup == nil:
		return reasonNotMeasured, "the operator does not measure warmth"
	case rollout != nil && rollout.Pacing == cachev1.RolloutPacingNone:
		return reasonPacingOff, "spec.rollout.pacing is None"
	case mc.Spec.TLS != nil:
		// Its counters are behind TLS, which the operator does not speak
		// to memcached.
		return reasonNotMeasured, "the warmth of pods that serve TLS is not measured"
	case !replacing(p, pods):
		return reasonNothingReplaced, "no pod of an older template runs"
	}
	reason, why, judged := r.sampleWarmth(ctx, client.ObjectKeyFromObject(mc), p, peers, warmupRule(mc))
	if reason == "" && judged && r.clock.Since(containersReadySince(p)) >= warmupTimeout(mc) {
		reason = eventWarmupTimedOut
	}
	return reason, why
}

// sampleWarmth reads the counters of p and its peers once the last read is
// an interval old, and judges p over the window between the two reads, or
// at the first read when that settles it. judged is false until p was
// judged, or when p did not answer.
func (r *MemcachedReconciler) sampleWarmth(ctx context.Context, key types.NamespacedName, p *corev1.Pod, peers []*corev1.Pod, rule warmup.Rule) (reason, why string, judged bool) {
	now := r.clock.Now()
	last, ok := r.warmups.get(key, p.UID)
	if ok && now.Sub(last.at) < r.opts.Warmup.Interval {
		return "", last.why, last.judged
	}
	port := r.opts.Warmup.Port
	if port == 0 {
		port = operand.Port
	}
	read := func(p *corev1.Pod) (warmup.Stats, error) {
		return warmup.Read(ctx, net.JoinHostPort(p.Status.PodIP, strconv.Itoa(port)), statsTimeout)
	}
	stats, err := read(p)
	if err != nil {
		// Not the reconcile's error: the pod may be busy starting, and the
		// timeout still holds.
		return "", "its counters could not be read: " + err.Error(), true
	}
	round := warmupRound{at: now, stats: map[types.UID]warmup.Stats{p.UID: stats}}
	w := warmup.Window{Pod: [2]warmup.Stats{last.stats[p.UID], stats}}
	var peersNow []warmup.Stats
	complete := ok
	for _, peer := range peers {
		ps, err := read(peer)
		if err != nil {
			// A peer that does not answer is no measure of warmth.
			continue
		}
		round.stats[peer.UID] = ps
		before, seen := last.stats[peer.UID]
		complete = complete && seen
		w.Peers = append(w.Peers, [2]warmup.Stats{before, ps})
		peersNow = append(peersNow, ps)
	}
	v, judged := warmup.NothingToCatchUp(peersNow)
	if !judged && complete {
		v, judged = rule.Judge(w), true
	}
	why = "its counters are read again after " + r.opts.Warmup.Interval.String()
	if judged {
		why = v.Why
		if v.Warm {
			reason = eventPodWarm
		}
	}
	round.why, round.judged = why, judged
	r.warmups.put(key, p.UID, round)
	return reason, why, judged
}

// markWarm sets p's WarmCondition to True with reason and why.
func (r *MemcachedReconciler) markWarm(ctx context.Context, p *corev1.Pod, reason, why string) error {
	cond := corev1.PodCondition{Type: WarmCondition, Status: corev1.ConditionTrue, Reason: reason, Message: why,
		LastTransitionTime: metav1.Now()}
	patch, err := json.Marshal(map[string]any{"status": map[string]any{"conditions": []corev1.PodCondition{cond}}})
	if err != nil {
		return err
	}
	if err := r.client.Status().Patch(ctx, p, client.RawPatch(types.StrategicMergePatchType, patch)); err != nil {
		return client.IgnoreNotFound(fmt.Errorf("marking pod %s warm: %w", p.Name, err))
	}
	log.FromContext(ctx).Info("pod warm", "pod", p.Name, "reason", reason, "why", why)
	return nil
}

// replacing reports whether a pod of another template than p's runs
// beside it: p was started by a rollout, and that pod holds a share of the
// cache that p's warmth must make up for before it stops.
func replacing(p *corev1.Pod, pods []corev1.Pod) bool {
	hash := p.Labels[appsv1.DefaultDeploymentUniqueLabelKey]
	for i := range pods {
		if pods[i].DeletionTimestamp == nil && pods[i].Status.Phase == corev1.PodRunning &&
			pods[i].Labels[appsv1.DefaultDeploymentUniqueLabelKey] != hash {
			return true
		}
	}
	return false
}

func hasPodGate(p *corev1.Pod) bool {
	for _, g := range p.Spec.ReadinessGates {
		if g.ConditionType == WarmCondition {
			return true
		}
	}
	return false
}

func podCondition(p *corev1.Pod, t corev1.PodConditionType) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == t {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// containersReadySince is when p's containers last became ready.
func containersReadySince(p *corev1.Pod) time.Time {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.ContainersReady {
			return c.LastTransitionTime.Time
		}
	}
	return time.Time{}
}

func warmupRule(mc *cachev1.Memcached) warmup.Rule {
	rule := warmup.Rule{ItemsPercent: defaultItemsPercent, HitRatioPoints: defaultHitRatioPoints}
	if ro := mc.Spec.Rollout; ro != nil {
		if ro.ItemsPercent != nil {
			rule.ItemsPercent = *ro.ItemsPercent
		}
		if ro.HitRatioPoints != nil {
			rule.HitRatioPoints = *ro.HitRatioPoints
		}
	}
	return rule
}

func warmupTimeout(mc *cachev1.Memcached) time.Duration {
	if ro := mc.Spec.Rollout; ro != nil && ro.WarmupTimeout != nil {
		return ro.WarmupTimeout.Duration
	}
	return defaultWarmupTimeout
}

// withWarming sets the Warming condition of st: True while w waits, False
// once nothing does. A Memcached whose rollouts never waited has none.
func withWarming(mc *cachev1.Memcached, st cachev1.MemcachedStatus, w *warming) cachev1.MemcachedStatus {
	c := metav1.Condition{Type: cachev1.ConditionWarming, Status: metav1.ConditionFalse, Reason: cachev1.ReasonNoPodWarming,
		Message: "no rollout waits for a pod to warm up", ObservedGeneration: mc.Generation}
	switch {
	case w != nil:
		c.Status, c.Reason = metav1.ConditionTrue, cachev1.ReasonWaitingForWarmth
		c.Message = fmt.Sprintf("pod %s: %s; the rollout goes on by %s at the latest", w.pod, w.why, w.until.UTC().Format(time.RFC3339))
	case meta.FindStatusCondition(st.Conditions, cachev1.ConditionWarming) == nil:
		return st
	}
	meta.SetStatusCondition(&st.Conditions, c)
	return st
}
