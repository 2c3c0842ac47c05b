package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
	"github.com/example-inc/memcached-operator/api/v1/gen"
	"github.com/example-inc/memcached-operator/controllers"
	"github.com/example-inc/memcached-operator/controllers/operand"
	"github.com/example-inc/memcached-operator/hack/local-cluster/images"
	"github.com/example-inc/memcached-operator/hack/local-cluster/localcluster"
	"github.com/example-inc/memcached-operator/hack/local-cluster/memcachedproc"
	"github.com/example-inc/memcached-operator/hack/local-cluster/process"
	"github.com/example-inc/memcached-operator/test/framework/memload"
)

// memcachedNamespace holds the memcached scenario's Memcached pods.
const memcachedNamespace = "bench-memcached"

// podVariant is one way of running the pod the scenario measures: a name
// for the report and what it does to the stored spec.
type podVariant struct {
	name  string
	apply func(*cachev1.MemcachedSpec)
}

// podVariants are the pods measured against the host's memcached: the
// defaults first, then the earlier defaults' CPU limit, which Memcached
// stored with it still run.
func podVariants() []podVariant {
	return []podVariant{
		{name: "the defaults", apply: func(*cachev1.MemcachedSpec) {}},
		{name: "the earlier defaults, 125m CPU per thread", apply: func(spec *cachev1.MemcachedSpec) {
			r := operand.ResourcesWithCPULimit(operand.FromSpec(spec))
			spec.Resources = &r
		}},
	}
}

// loadTarget is a memcached the load is sent to: the host's or a pod's.
type loadTarget struct {
	name string
	addr string
	pid  int
	// inPod: the process runs in a pod, whose cgroup is read, with
	// resources.
	inPod     bool
	resources corev1.ResourceRequirements
	acc       *loadAccumulator
}

// loadAccumulator sums a target's phases.
type loadAccumulator struct {
	res                memload.Result
	cpuSeconds         float64
	periods, throttled int64
	limitCores         float64
	rounds             []float64
}

// memcached is the memcached scenario (doc.go). Each round loads the host's
// memcached and each pod in turn, so that a change in the machine's other
// load spreads over all of them.
func (b *bench) memcached(ctx context.Context) (err error) {
	start := time.Now()
	dir := filepath.Join(b.dir, scenarioMemcached)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	node, err := b.realNode(ctx)
	if err != nil {
		return err
	}
	cluster, c := node.cluster, node.client
	targets, command, err := startPods(ctx, c, cluster, b.o.waitTimeout)
	if err != nil {
		return err
	}
	host, err := memcachedproc.Start(ctx, command, filepath.Join(dir, "host-memcached.log"))
	if err != nil {
		return err
	}
	removeCgroup, err := weighLikePods(host.PID(), targets[0].pid)
	if err != nil {
		return errors.Join(err, host.Stop(10*time.Second))
	}
	defer func() { err = errors.Join(err, host.Stop(10*time.Second), removeCgroup()) }()
	targets = append([]*loadTarget{{name: "host", addr: host.Addr, pid: host.PID()}}, targets...)
	progress("memcached: host and %d pod(s) serving after %.1fs; %d rounds of %s each", len(targets)-1, time.Since(start).Seconds(),
		b.o.memcachedRounds, b.o.memcachedPhase)

	load := memload.Options{Connections: b.o.memcachedConnections, Duration: b.o.memcachedPhase}.WithDefaults()
	for _, t := range targets {
		t.acc = &loadAccumulator{res: memload.Result{Latency: memload.NewHistogram()}}
		o := load
		o.Addr = t.addr
		if err := memload.Preload(ctx, o); err != nil {
			return fmt.Errorf("%s: %w", t.name, err)
		}
	}
	for round := range b.o.memcachedRounds {
		for _, t := range targets {
			if err := t.measure(ctx, load); err != nil {
				return fmt.Errorf("round %d, %s: %w", round+1, t.name, err)
			}
		}
	}
	r := memcachedFiguresOf(targets, command, load, b.o.memcachedRounds)
	b.memcachedRes = r
	for _, p := range r.Pods {
		b.table.row(scenarioMemcached, 1, time.Since(start).Seconds(), 0, 0, 0,
			fmt.Sprintf("pod at %s: %.0f ops/s, p99 %.0f µs; host %.0f ops/s, p99 %.0f µs: throughput %.2f, p99 %.2f",
				p.Name, p.OpsPerSecond, p.P99Micros, r.Host.OpsPerSecond, r.Host.P99Micros, p.ThroughputRatio, p.P99Ratio))
	}
	return nil
}

// startPods applies the Deployment of each pod variant's Memcached, waits
// until every pod serves, and returns them with memcached's command line,
// which is the same in every variant.
func startPods(ctx context.Context, c client.Client, cluster *localcluster.Cluster, timeout time.Duration) ([]*loadTarget, []string, error) {
	var command []string
	var names []string
	for i, v := range podVariants() {
		mc := gen.Memcached(memcachedNamespace, fmt.Sprintf("throughput-%d", i), gen.WithSize(1))
		if err := asStored(ctx, c, mc); err != nil {
			return nil, nil, err
		}
		v.apply(&mc.Spec)
		mc.UID = "throughput"
		for _, ac := range controllers.DesiredObjects(mc, controllers.Options{Image: images.MemcachedTag, ExporterImage: images.MemcachedExporterTag}) {
			u, err := unowned(ac)
			if err != nil {
				return nil, nil, err
			}
			if u.GetKind() != "Deployment" {
				continue
			}
			if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(controllers.FieldOwner)); err != nil {
				return nil, nil, fmt.Errorf("applying the Deployment of %s: %w", v.name, err)
			}
		}
		names = append(names, mc.Name)
	}
	var targets []*loadTarget
	for i, name := range names {
		pod, err := servingPod(ctx, c, memcachedNamespace, name, timeout)
		if err != nil {
			return nil, nil, err
		}
		cmd := pod.Spec.Containers[0].Command
		if command == nil {
			command = cmd
		} else if fmt.Sprint(cmd) != fmt.Sprint(command) {
			return nil, nil, fmt.Errorf("pod %s runs %q, pod of the defaults %q", pod.Name, cmd, command)
		}
		pid, err := cluster.ContainerPID(ctx, localcluster.ContainerStatus(pod, "memcached").ContainerID)
		if err != nil {
			return nil, nil, err
		}
		targets = append(targets, &loadTarget{name: podVariants()[i].name, addr: pod.Status.PodIP + ":11211", pid: pid,
			inPod: true, resources: pod.Spec.Containers[0].Resources})
	}
	return targets, command, nil
}

// servingPod waits until the Deployment name has one pod, Running and
// Ready on the real node, and returns it.
func servingPod(ctx context.Context, c client.Client, namespace, name string, timeout time.Duration) (*corev1.Pod, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	ticker := time.NewTicker(250 * time.Millisecond)
	defer ticker.Stop()
	for {
		var pods corev1.PodList
		err := c.List(ctx, &pods, client.InNamespace(namespace), client.MatchingLabels{"app.kubernetes.io/instance": name})
		if err == nil && len(pods.Items) == 1 {
			p := &pods.Items[0]
			if p.Status.Phase == corev1.PodRunning && p.Spec.NodeName == localcluster.RealNodeName && podReady(p) && p.Status.PodIP != "" {
				return p, nil
			}
			err = fmt.Errorf("pod %s: %s, ready %v, on %q", p.Name, p.Status.Phase, podReady(p), p.Spec.NodeName)
		} else if err == nil {
			err = fmt.Errorf("%d pods", len(pods.Items))
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("the pod of %s does not serve: %w (last: %v)", name, ctx.Err(), err)
		case <-ticker.C:
		}
	}
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// measure sends one phase of the load to t and adds what it served, the
// CPU its memcached used and, for a pod, how often CFS throttled it.
func (t *loadTarget) measure(ctx context.Context, load memload.Options) error {
	load.Addr = t.addr
	cpu0, err := process.ReadUsage(t.pid)
	if err != nil {
		return err
	}
	var cg0 cpuCgroup
	if t.inPod {
		if cg0, err = readCPUCgroup(t.pid); err != nil {
			return err
		}
	}
	r, err := memload.Run(ctx, load)
	if err != nil {
		return err
	}
	cpu1, err := process.ReadUsage(t.pid)
	if err != nil {
		return err
	}
	a := t.acc
	if t.inPod {
		cg1, err := readCPUCgroup(t.pid)
		if err != nil {
			return err
		}
		a.periods += cg1.periods - cg0.periods
		a.throttled += cg1.throttled - cg0.throttled
		a.limitCores = cg1.limitCores
	}
	a.cpuSeconds += cpu1.CPUSeconds - cpu0.CPUSeconds
	a.res.Elapsed += r.Elapsed
	a.res.Gets += r.Gets
	a.res.Sets += r.Sets
	a.res.Misses += r.Misses
	a.res.Latency.Merge(r.Latency)
	a.rounds = append(a.rounds, r.OpsPerSecond())
	if r.Ops() == 0 {
		return errors.New("no request answered")
	}
	return nil
}

// figures are the accumulated phases of one target.
func (a *loadAccumulator) figures() memcachedFigures {
	h := a.res.Latency
	micros := func(q float64) float64 { return float64(h.ValueAtQuantile(q)) / 1e3 }
	return memcachedFigures{
		OpsPerSecond: a.res.OpsPerSecond(), RoundsOpsPerSecond: a.rounds,
		Gets: a.res.Gets, Sets: a.res.Sets, Misses: a.res.Misses, Seconds: a.res.Elapsed.Seconds(),
		P50Micros: micros(50), P99Micros: micros(99), P999Micros: micros(99.9), MaxMicros: float64(h.Max()) / 1e3,
		CPUSeconds: a.cpuSeconds, Cores: a.cpuSeconds / a.res.Elapsed.Seconds(),
	}
}
