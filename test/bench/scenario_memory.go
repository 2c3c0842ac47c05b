package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
	"github.com/example-inc/memcached-operator/api/v1/gen"
	"github.com/example-inc/memcached-operator/certs/certstest"
	"github.com/example-inc/memcached-operator/controllers/operand"
	"github.com/example-inc/memcached-operator/hack/local-cluster/images"
	"github.com/example-inc/memcached-operator/hack/local-cluster/localcluster"
)

// memoryNamespace holds the memory scenario's Memcached.
const memoryNamespace = "bench-memory"

// The memory scenario's load, the same for every Memcached.
const (
	// smallValueBytes is the small items' size, as in the memcached
	// scenario's load.
	smallValueBytes = 100
	// fillBatch is how many small sets a writer pipelines at a time.
	fillBatch = 1000
	// tlsFillBatch is fillBatch over TLS. Debian's memcached 1.6.18 stops
	// reading a TLS connection whose client sent more requests at once than
	// it serves per read (reqs_per_event, 20): the rest wait, decrypted in
	// OpenSSL's buffer, for a socket event that never comes. 19 sets and
	// the no-op that follows them are served; 25 stalled the connection
	// (tried on the host with Go's TLS client).
	tlsFillBatch = 19
	// writersPerThread: memcached hands each new connection to its next
	// thread, so two writers per thread keep every thread busy.
	writersPerThread = 2
	// largeHeadroom is how much smaller than maxItemSize a large value is:
	// the item's header, key and flags must fit beside it.
	largeHeadroom = 1024
)

// memoryFill is one Memcached the scenario fills: spec.memory, whether it
// serves TLS, and its maxConnections (0: the default).
type memoryFill struct {
	memory      string
	tls         bool
	connections int32
}

func (f memoryFill) caseName() string {
	n := f.memory
	if f.tls {
		n += " with TLS"
	}
	if f.connections != 0 {
		n += fmt.Sprintf(", maxConnections %d", f.connections)
	}
	return n
}

// objectName is the Memcached's name: fill-64mi, fill-64mi-tls-4096.
func (f memoryFill) objectName() string {
	n := "fill-" + strings.ToLower(f.memory)
	if f.tls {
		n += "-tls"
	}
	if f.connections != 0 {
		n += fmt.Sprintf("-%d", f.connections)
	}
	return n
}

// memoryFills are the Memcached of the run: each of -memory-sizes, then the
// first size again serving TLS, once for each of -memory-tls-conns.
func (o options) memoryFills() []memoryFill {
	var out []memoryFill
	for _, m := range o.memorySizes {
		out = append(out, memoryFill{memory: m})
	}
	for _, c := range o.memoryTLSConnections {
		f := memoryFill{memory: o.memorySizes[0], tls: true}
		// The default stays unset, as a Memcached that sets only its
		// memory has it.
		if c != operand.DefaultMaxConnections {
			f.connections = c
		}
		out = append(out, f)
	}
	return out
}

// memory is the memory scenario (doc.go). Its Memcached are created through
// the operator, whose webhooks derive the pods' memory request and limit
// from spec.memory.
func (b *bench) memory(ctx context.Context, built func() error) error {
	start := time.Now()
	cgroupVersion := "v1"
	if _, err := os.Stat("/sys/fs/cgroup/cgroup.controllers"); err == nil {
		cgroupVersion = "v2"
	}
	r := &memoryResults{Config: memoryConfig{
		SmallValueBytes: smallValueBytes, Batch: fillBatch, TLSBatch: tlsFillBatch, WritersPerThr: writersPerThread, Turnover: b.o.memoryTurnover,
		LargeHeadroomBytes: largeHeadroom, LargeFill: b.o.memoryLargeFill, Cgroup: cgroupVersion,
	}}
	b.memoryRes = r
	// The scenario's own time, from the real node's start when it starts
	// it.
	defer func() { r.DurationSeconds = time.Since(start).Seconds() }()
	dir := filepath.Join(b.dir, scenarioMemory)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	node, err := b.realNode(ctx)
	if err != nil {
		return err
	}
	fills := b.o.memoryFills()
	var env []string
	if slices.ContainsFunc(fills, func(f memoryFill) bool { return f.tls }) {
		img, err := images.TLSReloader(ctx, filepath.Join(dir, "images"), images.TLSReloaderTag)
		if err != nil {
			return err
		}
		if err := node.cluster.ImportImages(ctx, img.Archive); err != nil {
			return err
		}
		env = append(env, "RELATED_IMAGE_TLS_RELOADER="+images.TLSReloaderTag)
	}
	if err := built(); err != nil {
		return err
	}
	op, err := b.realNodeOperator(ctx, node, dir, memoryNamespace, env)
	if err != nil {
		return err
	}
	defer func() { _ = op.Stop(30 * time.Second) }()
	progress("memory: operator serving after %.1fs; filling %d Memcached", time.Since(start).Seconds(), len(fills))
	for _, f := range fills {
		c, err := b.fill(ctx, node, f)
		r.Cases = append(r.Cases, c)
		if err != nil {
			return fmt.Errorf("%s: %w", f.caseName(), err)
		}
		detail := fmt.Sprintf("%s: peak %.1f of %.0f MiB (%.1f %% headroom), %s evictions, %d connections, %d restarts",
			c.Name, mib(c.Cgroup.PeakBytes), mib(c.Cgroup.LimitBytes), 100*c.headroom(),
			thousands(int(statInt(c.Stats, "evictions"))), c.Fill.Connections, c.Restarts)
		if fails := c.failures(); len(fails) > 0 {
			detail += ": FAILED: " + strings.Join(fails, ", ")
		}
		b.table.row(scenarioMemory, 1, c.Seconds, 0, 0, 0, detail)
	}
	if failures := memoryFailures(r); len(failures) > 0 {
		return errors.New(strings.Join(failures, "; "))
	}
	return nil
}

// fill creates the Memcached of f, fills it, reads its figures and deletes
// it. The case records how memcached fared; the error is for what kept the
// bench from finding out.
func (b *bench) fill(ctx context.Context, node *realNode, f memoryFill) (res memoryCase, err error) {
	start := time.Now()
	c := node.client
	mc := gen.Memcached(memoryNamespace, f.objectName(), gen.WithSize(1), gen.WithMemory(f.memory))
	if f.connections != 0 {
		gen.WithMaxConnections(f.connections)(mc)
	}
	res = memoryCase{Name: f.caseName(), Memory: f.memory, TLS: f.tls}
	defer func() { res.Seconds = time.Since(start).Seconds() }()
	var tlsConfig *tls.Config
	if f.tls {
		if tlsConfig, err = tlsSecret(ctx, c, mc.Name+"-tls", mc.Name+"."+memoryNamespace+".svc"); err != nil {
			return res, err
		}
		gen.WithTLS(mc.Name + "-tls")(mc)
	}
	if err := c.Create(ctx, mc); err != nil {
		return res, fmt.Errorf("creating Memcached %s: %w", mc.Name, err)
	}
	pod, err := servingPod(ctx, c, memoryNamespace, mc.Name, b.o.waitTimeout)
	if err != nil {
		return res, errors.Join(err, deleteMemcached(ctx, c, mc, b.o.waitTimeout))
	}
	err = b.fillPod(ctx, node, mc, pod, tlsConfig, &res)
	return res, errors.Join(err, deleteMemcached(ctx, c, mc, b.o.waitTimeout))
}

// fillPod fills the memcached of pod and reads its figures into res.
func (b *bench) fillPod(ctx context.Context, node *realNode, mc *cachev1.Memcached, pod *corev1.Pod, tlsConfig *tls.Config, res *memoryCase) error {
	stored := &cachev1.Memcached{}
	if err := node.client.Get(ctx, client.ObjectKeyFromObject(mc), stored); err != nil {
		return err
	}
	s := operand.FromSpec(&stored.Spec)
	res.MaxConnections, res.Threads, res.MaxItemSize, res.OverheadBytes = s.MaxConnections, s.Threads, s.MaxItemSize, operand.Overhead(s)
	res.MemoryBytes = s.MemoryMiB << 20
	i := slices.IndexFunc(pod.Spec.Containers, func(c corev1.Container) bool { return c.Name == "memcached" })
	if i < 0 {
		return fmt.Errorf("pod %s has no memcached container", pod.Name)
	}
	container := pod.Spec.Containers[i]
	res.MemcachedCommand = container.Command
	res.MemoryRequest, res.MemoryLimit = container.Resources.Requests.Memory().String(), container.Resources.Limits.Memory().String()
	id := localcluster.ContainerStatus(pod, "memcached").ContainerID
	if id == "" {
		return fmt.Errorf("pod %s: no running memcached container", pod.Name)
	}
	pid, err := node.cluster.ContainerPID(ctx, id)
	if err != nil {
		return err
	}
	cg, err := openMemoryCgroup(pid)
	if err != nil {
		return err
	}
	if err := cg.accountTCP(); err != nil {
		return fmt.Errorf("counting the container's TCP buffers: %w", err)
	}

	fl := &filler{o: fillOptions{
		addr: pod.Status.PodIP + ":11211", tls: tlsConfig, connections: int(s.MaxConnections),
		writers: writersPerThread * int(s.Threads), smallValue: smallValueBytes, batch: fillBatch,
		turnover: b.o.memoryTurnover, largeValue: int(s.MaxItemSize) - largeHeadroom, largeFill: b.o.memoryLargeFill,
	}}
	if tlsConfig != nil {
		fl.o.batch = tlsFillBatch
	}
	defer fl.close()
	// The kubelet removes the container's cgroup when the OOM killer ends
	// it: what the cgroup said last is kept from a sampler.
	sampled := sampleCgroup(ctx, cg)
	fillErr := fl.openConnections(ctx)
	if fillErr == nil {
		progress("memory: %s: %d connections open", res.Name, fl.res.Connections)
		fillErr = fl.fillSmall(ctx, s.MemoryMiB<<20)
	}
	if fillErr == nil {
		progress("memory: %s: %s small items sent in %.1fs, %s evictions", res.Name,
			thousands(int(fl.res.SmallSets)), fl.res.SmallSeconds, thousands(int(fl.res.EvictionsAfterSmall)))
		fillErr = fl.fillLarge(ctx, s.MemoryMiB<<20)
	}
	res.Fill = fl.res
	if fillErr == nil {
		// Read while every connection is still open, as they were at the
		// peak.
		res.Stats, fillErr = fl.ctl.Stats()
	}
	last := sampled()
	if cg.exists() {
		var err error
		if res.Cgroup, err = cg.read(); err != nil {
			return err
		}
	} else if last != nil {
		res.Cgroup = *last
	}
	if fillErr != nil {
		res.Error = fillErr.Error()
	}
	return b.readRestarts(ctx, node.client, pod, fillErr != nil, res)
}

// sampleCgroup reads cg every 100 ms until the returned function is
// called, which returns the last figures read, nil if none.
func sampleCgroup(ctx context.Context, cg memoryCgroup) func() *memoryFigures {
	ctx, cancel := context.WithCancel(ctx)
	var last *memoryFigures
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(context.Context) (bool, error) {
			if f, err := cg.read(); err == nil {
				last = &f
			}
			return false, nil
		})
	}()
	return func() *memoryFigures {
		cancel()
		<-done
		return last
	}
}

// readRestarts reads the memcached container's restarts. After a failed
// fill it waits, up to a minute, for the kubelet to report why the
// connections broke: a restart, an OOM kill.
func (b *bench) readRestarts(ctx context.Context, c client.Client, pod *corev1.Pod, failed bool, res *memoryCase) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	err := wait.PollUntilContextCancel(ctx, time.Second, true, func(context.Context) (bool, error) {
		p := &corev1.Pod{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(pod), p); err != nil {
			return false, err
		}
		s := localcluster.ContainerStatus(p, "memcached")
		res.Restarts = s.RestartCount
		if t := s.LastTerminationState.Terminated; t != nil {
			res.LastTermination = t.Reason
		}
		return !failed || res.Restarts > 0, nil
	})
	if failed && ctx.Err() != nil {
		// No restart within the minute: the fill's error says why it
		// failed.
		return nil
	}
	return err
}

// tlsSecret writes a kubernetes.io/tls Secret for serverName (and the
// pods' names under it) from a CA of its own, and returns how a client
// verifies it.
func tlsSecret(ctx context.Context, c client.Client, name, serverName string) (*tls.Config, error) {
	ca, err := certstest.NewCA("memcached-operator bench CA")
	if err != nil {
		return nil, err
	}
	cert, err := ca.Issue(certstest.CertOptions{DNSNames: []string{serverName, "*." + serverName}})
	if err != nil {
		return nil, err
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: memoryNamespace, Name: name},
		Type:       corev1.SecretTypeTLS,
		Data:       map[string][]byte{"tls.crt": cert.CertPEM, "tls.key": cert.KeyPEM, "ca.crt": ca.PEM},
	}
	if err := c.Create(ctx, secret); err != nil {
		return nil, fmt.Errorf("creating Secret %s: %w", name, err)
	}
	return &tls.Config{RootCAs: ca.Pool(), ServerName: serverName, MinVersion: tls.VersionTLS12}, nil
}

// deleteMemcached deletes mc and waits until its pods are gone, so that
// the next Memcached has the node to itself.
func deleteMemcached(ctx context.Context, c client.Client, mc *cachev1.Memcached, timeout time.Duration) error {
	if err := c.Delete(ctx, mc, client.PropagationPolicy(metav1.DeletePropagationForeground)); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	err := wait.PollUntilContextCancel(ctx, 250*time.Millisecond, true, func(context.Context) (bool, error) {
		var pods corev1.PodList
		if err := c.List(ctx, &pods, client.InNamespace(mc.Namespace), client.MatchingLabels{"app.kubernetes.io/instance": mc.Name}); err != nil {
			return false, err
		}
		err := c.Get(ctx, client.ObjectKeyFromObject(mc), &cachev1.Memcached{})
		return len(pods.Items) == 0 && apierrors.IsNotFound(err), nil
	})
	if err != nil {
		return fmt.Errorf("waiting for Memcached %s and its pods to be gone: %w", mc.Name, err)
	}
	return nil
}
