package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
	"github.com/example-inc/memcached-operator/api/v1/gen"
	"github.com/example-inc/memcached-operator/controllers"
	"github.com/example-inc/memcached-operator/controllers/operand"
)

// rolloutNamespace holds the rollout scenario's Memcached.
const rolloutNamespace = "bench-rollout"

// The rollout scenario's fixed parts: a size-3 Memcached, rolled by a
// change of maxConnections (part of memcached's command line), under a
// load of 100-byte values from rolloutWorkers workers, each with a
// connection to every server.
const (
	rolloutSize        = 3
	rolloutWorkers     = 8
	rolloutValueBytes  = 100
	rolloutBucket      = time.Second
	rolloutConnections = 2048
	// discoveryInterval is how often the load's discovery lists the
	// Service's EndpointSlices: what CoreDNS would answer for it.
	discoveryInterval = 100 * time.Millisecond
)

// rollout rolls a Memcached of three pods on the real node under a load
// that shards keys over the addresses its Service publishes, once with each
// pacing, and records the load's hit ratio over time.
func (b *bench) rollout(ctx context.Context, built func() error) error {
	start := time.Now()
	r := &rolloutResults{Config: rolloutConfig{
		Size: rolloutSize, Keys: b.o.rolloutKeys, ZipfS: b.o.rolloutZipfS, GetsPerSecond: b.o.rolloutRate,
		Workers: rolloutWorkers, ValueBytes: rolloutValueBytes, BucketSeconds: rolloutBucket.Seconds(),
		SteadySeconds: b.o.rolloutSteady.Seconds(), TailSeconds: b.o.rolloutTail.Seconds(),
		Change: fmt.Sprintf("spec.maxConnections from the default %d to %d", operand.DefaultMaxConnections, rolloutConnections),
	}}
	if b.o.rolloutWarmupTimeout > 0 {
		r.Config.WarmupTimeout = b.o.rolloutWarmupTimeout.String()
	}
	b.rolloutRes = r
	defer func() { r.DurationSeconds = time.Since(start).Seconds() }()
	node, err := b.realNode(ctx)
	if err != nil {
		return err
	}
	if err := built(); err != nil {
		return err
	}
	dir := filepath.Join(b.dir, scenarioRollout)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	// The operator measures warmth as it would in a cluster: every
	// --warmup-interval (its default), at the pods' addresses on the
	// node's bridge.
	op, err := b.realNodeOperator(ctx, node, dir, rolloutNamespace, nil)
	if err != nil {
		return err
	}
	defer func() { _ = op.Stop(30 * time.Second) }()
	for _, pacing := range []string{cachev1.RolloutPacingWarmth, cachev1.RolloutPacingNone} {
		c, err := b.rollOnce(ctx, node.client, pacing)
		if err != nil {
			c.Error = err.Error()
		}
		r.Cases = append(r.Cases, c)
		lowest, at := c.lowest(r.Config.BucketSeconds, 1)
		fewest, changes := c.fewestServers()
		b.table.row(scenarioRollout, 1, c.DoneAt-c.ChangedAt, 0, 0, 0, fmt.Sprintf(
			"pacing %s: lowest hit ratio %.1f %% at %.0f s, fewest addresses %d, %d changes%s",
			pacing, lowest, at, fewest, changes, errorNote(c.Error)))
	}
	if failures := rolloutFailures(r); len(failures) > 0 {
		return errors.New(strings.Join(failures, "; "))
	}
	return nil
}

func errorNote(err string) string {
	if err == "" {
		return ""
	}
	return ": FAILED: " + firstLine(err)
}

// rollOnce creates a Memcached with pacing, fills it through the load,
// changes it so that every pod is replaced while the load runs, and
// deletes it.
func (b *bench) rollOnce(ctx context.Context, c client.Client, pacing string) (res rolloutCase, err error) {
	res.Pacing = pacing
	rollout := cachev1.MemcachedRollout{Pacing: pacing}
	if b.o.rolloutWarmupTimeout > 0 {
		rollout.WarmupTimeout = &metav1.Duration{Duration: b.o.rolloutWarmupTimeout}
	}
	mc := gen.Memcached(rolloutNamespace, "rollout-"+strings.ToLower(pacing), gen.WithSize(rolloutSize), gen.WithRollout(rollout))
	if err := c.Create(ctx, mc); err != nil {
		return res, fmt.Errorf("creating Memcached %s: %w", mc.Name, err)
	}
	defer func() { err = errors.Join(err, deleteMemcached(ctx, c, mc, b.o.waitTimeout)) }()
	if err := waitRolledOut(ctx, c, mc, b.o.waitTimeout); err != nil {
		return res, err
	}
	load := newShardedLoad(shardedLoadOptions{
		keys: b.o.rolloutKeys, zipfS: b.o.rolloutZipfS, rate: b.o.rolloutRate, workers: rolloutWorkers,
		valueBytes: rolloutValueBytes, bucket: rolloutBucket,
	})
	loadCtx, stopLoad := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() {
		stopLoad()
		wg.Wait()
	}()
	servers := &discovery{}
	first := make(chan struct{})
	wg.Go(func() { servers.watch(loadCtx, c, mc, rolloutSize, first, load) })
	select {
	case <-first:
	case <-time.After(b.o.waitTimeout):
		return res, fmt.Errorf("the Service of %s never listed %d addresses", mc.Name, rolloutSize)
	case <-ctx.Done():
		return res, ctx.Err()
	}
	if err := load.fill(ctx); err != nil {
		return res, fmt.Errorf("filling the caches: %w", err)
	}
	wg.Go(func() { load.run(loadCtx) })
	progress("rollout: pacing %s: %s keys stored, load running for %s before the change", pacing, thousands(b.o.rolloutKeys), b.o.rolloutSteady)
	if err := pause(ctx, b.o.rolloutSteady); err != nil {
		return res, err
	}
	patch := client.MergeFrom(mc.DeepCopy())
	mc.Spec.MaxConnections = ptr.To[int32](rolloutConnections)
	if err := c.Patch(ctx, mc, patch); err != nil {
		return res, fmt.Errorf("changing Memcached %s: %w", mc.Name, err)
	}
	res.ChangedAt = load.since(time.Now())
	rollErr := waitRolledOut(ctx, c, mc, b.o.waitTimeout)
	res.DoneAt = load.since(time.Now())
	if rollErr == nil {
		progress("rollout: pacing %s: rolled out in %.0fs", pacing, res.DoneAt-res.ChangedAt)
		rollErr = pause(ctx, b.o.rolloutTail)
	}
	stopLoad()
	wg.Wait()
	res.Buckets = load.results()
	res.Servers = servers.since(load)
	if rollErr != nil {
		return res, rollErr
	}
	res.Pods, err = warmups(ctx, c, mc)
	return res, err
}

// pause waits d, or until ctx ends: the load's phases are lengths of time.
func pause(ctx context.Context, d time.Duration) error {
	select {
	case <-time.After(d):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// waitRolledOut waits until mc's Deployment has seen its last change and
// runs only pods of its template, all available, and no other pod of mc
// remains.
func waitRolledOut(ctx context.Context, c client.Client, mc *cachev1.Memcached, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last string
	err := wait.PollUntilContextCancel(ctx, 250*time.Millisecond, true, func(context.Context) (bool, error) {
		stored := &cachev1.Memcached{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(mc), stored); err != nil {
			return false, err
		}
		d := &appsv1.Deployment{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(mc), d); err != nil {
			last = err.Error()
			return false, nil
		}
		var pods corev1.PodList
		if err := c.List(ctx, &pods, client.InNamespace(mc.Namespace), client.MatchingLabels{"app.kubernetes.io/instance": mc.Name}); err != nil {
			return false, err
		}
		s := d.Status
		last = fmt.Sprintf("Memcached generation %d observed %d; Deployment generation %d observed %d, %d updated, %d available, %d pods",
			stored.Generation, stored.Status.ObservedGeneration, d.Generation, s.ObservedGeneration, s.UpdatedReplicas, s.AvailableReplicas, len(pods.Items))
		return stored.Status.ObservedGeneration == stored.Generation && s.ObservedGeneration == d.Generation &&
			s.UpdatedReplicas == rolloutSize && s.AvailableReplicas == rolloutSize && s.Replicas == rolloutSize &&
			len(pods.Items) == rolloutSize, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for %s to run %d pods of its spec: %w (last: %s)", mc.Name, rolloutSize, err, last)
	}
	return nil
}

// discovery is the load's view of the Service: the ready addresses of its
// EndpointSlices, which is what DNS answers for a headless Service, read
// every discoveryInterval.
type discovery struct {
	mu    sync.Mutex
	lists []timedList
}

type timedList struct {
	at        time.Time
	addresses []string
}

// watch gives load every new list until ctx ends, and closes first once
// a list holds want addresses.
func (d *discovery) watch(ctx context.Context, c client.Client, mc *cachev1.Memcached, want int, first chan<- struct{}, load *shardedLoad) {
	// last is nil both before the first list and after an empty one (every
	// pod unready at once), so whether first is closed is kept apart.
	var last []string
	started := false
	_ = wait.PollUntilContextCancel(ctx, discoveryInterval, true, func(context.Context) (bool, error) {
		var list discoveryv1.EndpointSliceList
		if err := c.List(ctx, &list, client.InNamespace(mc.Namespace), client.MatchingLabels{discoveryv1.LabelServiceName: mc.Name}); err != nil {
			// The next read may succeed; the load keeps the last list.
			return false, nil
		}
		addresses := readyAddresses(list.Items)
		if started && slices.Equal(addresses, last) {
			return false, nil
		}
		if !started && len(addresses) < want {
			return false, nil
		}
		load.setServers(addresses)
		d.mu.Lock()
		d.lists = append(d.lists, timedList{time.Now(), addresses})
		d.mu.Unlock()
		if !started {
			close(first)
			started = true
		}
		last = addresses
		return false, nil
	})
}

// since is every list, timed from load's start; the one given before it
// started counts from 0.
func (d *discovery) since(load *shardedLoad) []serverList {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]serverList, 0, len(d.lists))
	for _, l := range d.lists {
		out = append(out, serverList{At: max(0, load.since(l.at)), Addresses: l.addresses})
	}
	return out
}

// readyAddresses are the slices' ready endpoints as sorted host:port.
func readyAddresses(items []discoveryv1.EndpointSlice) []string {
	var out []string
	for _, s := range items {
		for _, e := range s.Endpoints {
			if !ptr.Deref(e.Conditions.Ready, false) {
				continue
			}
			for _, a := range e.Addresses {
				out = append(out, net.JoinHostPort(a, strconv.Itoa(operand.Port)))
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// warmups reads how each of mc's pods became ready, in the order the
// rollout started them: its warm condition and how long after its
// containers were ready.
func warmups(ctx context.Context, c client.Client, mc *cachev1.Memcached) ([]podWarmup, error) {
	var pods corev1.PodList
	if err := c.List(ctx, &pods, client.InNamespace(mc.Namespace), client.MatchingLabels{"app.kubernetes.io/instance": mc.Name}); err != nil {
		return nil, err
	}
	slices.SortFunc(pods.Items, func(a, b corev1.Pod) int { return a.CreationTimestamp.Compare(b.CreationTimestamp.Time) })
	var out []podWarmup
	for _, p := range pods.Items {
		w := podWarmup{Name: p.Name}
		var ready, warm time.Time
		for _, cond := range p.Status.Conditions {
			switch cond.Type {
			case corev1.ContainersReady:
				ready = cond.LastTransitionTime.Time
			case controllers.WarmCondition:
				w.Reason, w.Message, warm = cond.Reason, cond.Message, cond.LastTransitionTime.Time
			}
		}
		if !warm.IsZero() && !ready.IsZero() {
			w.Waited = warm.Sub(ready).Seconds()
		}
		out = append(out, w)
	}
	return out, nil
}
