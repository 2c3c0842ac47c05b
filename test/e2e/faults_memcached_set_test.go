package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
	"github.com/example-inc/memcached-operator/api/v1/gen"
	"github.com/example-inc/memcached-operator/certs"
	"github.com/example-inc/memcached-operator/hack/local-cluster/localcluster"
	"github.com/example-inc/memcached-operator/test/framework/harness"
	"github.com/example-inc/memcached-operator/test/framework/operatorproc"
	"github.com/example-inc/memcached-operator/test/framework/webhookroute"
)

// memcachedSet is a rollout of Memcached objects in a namespace that holds
// nothing else, so that every Deployment, Service, PDB, ReplicaSet and pod
// found there must belong to one of them.
type memcachedSet struct {
	ns    string
	names []string
	sizes map[string]int32
}

// newMemcachedSet creates the namespace for n Memcached objects of sizes 1,
// 2 and 3 in turn: size 1 has no PDB, the others one.
func newMemcachedSet(ctx context.Context, ns string, n int) *memcachedSet {
	cluster.namespace(ctx, ns, nil)
	s := &memcachedSet{ns: ns, sizes: map[string]int32{}}
	for i := range n {
		name := fmt.Sprintf("mc-%03d", i)
		s.names = append(s.names, name)
		s.sizes[name] = int32(1 + i%3)
	}
	return s
}

// fakeMemcached is gen.Memcached with its pods on the cluster's kwok node,
// Ready at once and running nothing: the fault specs are about the
// operator, and their hundreds of pods would not fit the real node.
func fakeMemcached(ns, name string, opts ...gen.MemcachedOption) *cachev1.Memcached {
	mc := gen.Memcached(ns, name, opts...)
	mc.Spec.NodeSelector, mc.Spec.Tolerations = onFakeNode()
	return mc
}

// onFakeNode is the node selector and toleration that put a pod on the
// cluster's kwok node.
func onFakeNode() (map[string]string, []corev1.Toleration) {
	return localcluster.FakeNodeLabels, []corev1.Toleration{{
		Key: localcluster.FakeNodeTaint.Key, Operator: corev1.TolerationOpEqual,
		Value: localcluster.FakeNodeTaint.Value, Effect: localcluster.FakeNodeTaint.Effect,
	}}
}

// pods is the number of memcached pods the set asks for.
func (s *memcachedSet) pods() int {
	n := 0
	for _, size := range s.sizes {
		n += int(size)
	}
	return n
}

// create creates every Memcached in turn. A create the API server refuses
// because it cannot call the webhooks (they fail closed while a killed
// operator is down) is retried until it is admitted; any other error ends
// it. It returns how many refusals it met.
func (s *memcachedSet) create(ctx context.Context) (refused int, err error) {
	for _, name := range s.names {
		err := wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
			err := k8s.Create(ctx, fakeMemcached(s.ns, name, gen.WithSize(s.sizes[name])))
			switch {
			case err == nil, apierrors.IsAlreadyExists(err):
				return true, nil
			case apierrors.IsInternalError(err) && strings.Contains(err.Error(), "failed calling webhook"):
				refused++
				return false, nil
			default:
				return false, err
			}
		})
		if err != nil {
			return refused, fmt.Errorf("creating %s/%s: %w", s.ns, name, err)
		}
	}
	return refused, nil
}

// createInBackground runs create in a goroutine; the channel receives its
// error once every Memcached exists.
func (s *memcachedSet) createInBackground(ctx context.Context) <-chan error {
	done := make(chan error, 1)
	go func() {
		defer GinkgoRecover()
		refused, err := s.create(ctx)
		if refused > 0 {
			AddReportEntry(fmt.Sprintf("%s: creates refused while the webhooks were down, then retried", s.ns), refused)
		}
		done <- err
	}()
	return done
}

// add creates one more Memcached of the set, named name.
func (s *memcachedSet) add(ctx context.Context, name string, size int32) {
	s.names = append(s.names, name)
	s.sizes[name] = size
	Expect(k8s.Create(ctx, fakeMemcached(s.ns, name, gen.WithSize(size)))).To(Succeed())
}

// timeout bounds a wait on the whole set: on two shared cores a pod takes
// about a second end to end, and the control plane restarts take minutes.
func (s *memcachedSet) timeout() time.Duration {
	return 4*time.Minute + time.Duration(s.pods())*time.Second
}

// available counts the Memcached objects whose Available condition is True.
func (s *memcachedSet) available(ctx context.Context) (int, error) {
	list := &cachev1.MemcachedList{}
	if err := k8s.List(ctx, list, client.InNamespace(s.ns)); err != nil {
		return 0, err
	}
	n := 0
	for _, mc := range list.Items {
		if meta.IsStatusConditionTrue(mc.Status.Conditions, cachev1.ConditionAvailable) {
			n++
		}
	}
	return n, nil
}

// waitConverged waits until problems finds none.
func (s *memcachedSet) waitConverged(ctx context.Context) {
	Eventually(func(g Gomega) {
		problems, err := s.problems(ctx)
		g.Expect(err).NotTo(HaveOccurred())
		if len(problems) > 15 {
			problems = append(problems[:15], fmt.Sprintf("... and %d more", len(problems)-15))
		}
		g.Expect(problems).To(BeEmpty())
	}).WithContext(ctx).WithTimeout(s.timeout()).WithPolling(2 * time.Second).Should(Succeed())
}

// problems lists every way the set's namespace differs from a converged
// set: each Memcached with its status right (Available, Progressing done,
// not Degraded, readyReplicas, nodes, observedGeneration), exactly one
// Deployment and Service and, from size 2, one PDB, each controlled by it,
// and no other object: no orphan, no duplicate, no ReplicaSet beyond the
// one each Deployment needs, no pod beyond spec.size.
func (s *memcachedSet) problems(ctx context.Context) ([]string, error) {
	c := &convergence{set: s}
	for _, l := range []client.ObjectList{&c.mcs, &c.deps, &c.svcs, &c.pdbs, &c.rss, &c.pods} {
		if err := k8s.List(ctx, l, client.InNamespace(s.ns)); err != nil {
			return nil, err
		}
	}
	c.uids = map[string]types.UID{}
	for _, mc := range c.mcs.Items {
		c.uids[mc.Name] = mc.UID
	}
	if len(c.mcs.Items) != len(s.names) {
		c.report("%d Memcached objects, want %d", len(c.mcs.Items), len(s.names))
	}
	all := func(string) bool { return true }
	deps := c.owned("Deployment", objects(c.deps.Items), all)
	c.owned("Service", objects(c.svcs.Items), all)
	c.owned("PodDisruptionBudget", objects(c.pdbs.Items), func(name string) bool { return s.sizes[name] >= 2 })
	readyPods := c.replicaSetsAndPods(deps)
	for _, mc := range c.mcs.Items {
		c.memcached(&mc, deps, readyPods[mc.Name])
	}
	return c.problems, nil
}

// convergence is one look at a set's namespace, and what is wrong in it.
type convergence struct {
	set      *memcachedSet
	mcs      cachev1.MemcachedList
	deps     appsv1.DeploymentList
	svcs     corev1.ServiceList
	pdbs     policyv1.PodDisruptionBudgetList
	rss      appsv1.ReplicaSetList
	pods     corev1.PodList
	uids     map[string]types.UID // Memcached name -> UID
	problems []string
	// replicaSets counts each Deployment's ReplicaSets.
	replicaSets map[string]int
}

func (c *convergence) report(format string, args ...any) {
	c.problems = append(c.problems, fmt.Sprintf(format, args...))
}

// owned checks that objs are exactly one per Memcached that wants one, each
// controlled by its namesake, and returns them by name.
func (c *convergence) owned(kind string, objs []metav1.Object, wants func(name string) bool) map[string]metav1.Object {
	byName := map[string]metav1.Object{}
	for _, o := range objs {
		byName[o.GetName()] = o
		uid, ok := c.uids[o.GetName()]
		switch {
		case !ok || !wants(o.GetName()):
			c.report("%s %s belongs to no Memcached that wants one (orphan or extra)", kind, o.GetName())
		case !controlledBy(o, uid):
			c.report("%s %s is not controlled by Memcached %s (%s)", kind, o.GetName(), o.GetName(), uid)
		}
	}
	for _, name := range c.set.names {
		if _, ok := byName[name]; wants(name) && !ok {
			c.report("Memcached %s has no %s", name, kind)
		}
	}
	return byName
}

// replicaSetsAndPods checks that every ReplicaSet belongs to a live
// Deployment and every pod to a live ReplicaSet, counts the ReplicaSets,
// and returns the ready pods' names by Memcached.
func (c *convergence) replicaSetsAndPods(deps map[string]metav1.Object) map[string][]string {
	rsOwner := map[types.UID]string{} // ReplicaSet UID -> Memcached name
	c.replicaSets = map[string]int{}
	for _, rs := range c.rss.Items {
		ref := metav1.GetControllerOf(&rs)
		d, ok := deps[ptr.Deref(ref, metav1.OwnerReference{}).Name]
		if !ok || !controlledBy(&rs, d.GetUID()) {
			c.report("ReplicaSet %s is controlled by no live Deployment", rs.Name)
			continue
		}
		rsOwner[rs.UID] = d.GetName()
		c.replicaSets[d.GetName()]++
	}
	ready := map[string][]string{}
	for _, p := range c.pods.Items {
		ref := metav1.GetControllerOf(&p)
		if ref == nil || rsOwner[ref.UID] == "" {
			c.report("pod %s is controlled by no live ReplicaSet", p.Name)
			continue
		}
		if harness.PodReady(&p) && p.DeletionTimestamp.IsZero() {
			ready[rsOwner[ref.UID]] = append(ready[rsOwner[ref.UID]], p.Name)
		}
	}
	return ready
}

// memcached checks one Memcached: its Deployment's size, its ReplicaSet
// and its status against the ready pods.
func (c *convergence) memcached(mc *cachev1.Memcached, deps map[string]metav1.Object, ready []string) {
	size, ok := c.set.sizes[mc.Name]
	if !ok {
		c.report("Memcached %s was not created by the test", mc.Name)
		return
	}
	if n := c.replicaSets[mc.Name]; n != 1 {
		c.report("Deployment %s has %d ReplicaSets, want 1", mc.Name, n)
	}
	if d, ok := deps[mc.Name].(*appsv1.Deployment); ok && (ptr.Deref(d.Spec.Replicas, -1) != size || d.Status.ReadyReplicas != size) {
		c.report("Deployment %s: replicas %v, ready %d, want %d", mc.Name, d.Spec.Replicas, d.Status.ReadyReplicas, size)
	}
	slices.Sort(ready)
	st := mc.Status
	switch {
	case st.ObservedGeneration != mc.Generation:
		c.report("Memcached %s: observedGeneration %d, generation %d", mc.Name, st.ObservedGeneration, mc.Generation)
	case !meta.IsStatusConditionTrue(st.Conditions, cachev1.ConditionAvailable),
		!meta.IsStatusConditionFalse(st.Conditions, cachev1.ConditionProgressing),
		!meta.IsStatusConditionFalse(st.Conditions, cachev1.ConditionDegraded):
		c.report("Memcached %s: conditions %s", mc.Name, conditionSummary(st.Conditions))
	case st.ReadyReplicas != size || len(ready) != int(size):
		c.report("Memcached %s: status.readyReplicas %d, ready pods %d, want %d", mc.Name, st.ReadyReplicas, len(ready), size)
	case !slices.Equal(st.Nodes, ready):
		c.report("Memcached %s: status.nodes %v, ready pods %v", mc.Name, st.Nodes, ready)
	}
}

// objects turns a list's items into metav1.Objects.
func objects[T any, PT interface {
	*T
	metav1.Object
}](items []T) []metav1.Object {
	out := make([]metav1.Object, 0, len(items))
	for i := range items {
		out = append(out, PT(&items[i]))
	}
	return out
}

func controlledBy(o metav1.Object, uid types.UID) bool {
	ref := metav1.GetControllerOf(o)
	return ref != nil && ref.UID == uid
}

func conditionSummary(conds []metav1.Condition) string {
	s := ""
	for _, c := range conds {
		s += fmt.Sprintf("%s=%s(%s) ", c.Type, c.Status, c.Reason)
	}
	return s
}

// Sizes of the fault specs, from the environment so CI and a developer can
// pick them without editing code.
var (
	// crashCRs is the number of Memcached objects in the crash rollout: 200
	// in CI too.
	crashCRs = envInt("FAULT_CRS", 200)
	// crashKills is how many times the operator is killed during it.
	crashKills = envInt("FAULT_KILLS", 5)
)

// envInt reads a positive integer from the environment, or def.
func envInt(name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		panic(fmt.Sprintf("%s=%q: want a positive integer", name, v))
	}
	return n
}

// operatorConfig says how a spec runs its operator.
type operatorConfig struct {
	// Namespace is the only one the operator watches (WATCH_NAMESPACE), so
	// specs never see each other's objects; it also holds the leader
	// election Lease.
	Namespace string
	// Webhooks serves the admission webhooks in local mode: the operator
	// points the cluster's webhook configurations at itself on 127.0.0.1.
	Webhooks bool
	// LeaderElect turns leader election on.
	LeaderElect bool
	// Env is added to the operator's environment (NAME=value).
	Env []string
}

// operator is one operator process of a spec; Restart brings a killed one
// back on the same ports and log, as kubelet restarts a crashed container.
type operator struct {
	*operatorproc.Operator
}

// localWebhookCertDir is shared by every operator of the suite: the first
// makes the local CA and certificate there, the others reuse them.
func localWebhookCertDir() string { return filepath.Join(workDir, "faults-webhook-certs") }

// startOperator starts an operator whose log is faults-<name>.log in the
// work directory and returns once it is ready (with webhooks, once the
// cluster's webhook configurations point at it). It is stopped when the
// spec ends, and the end of its log is printed if the spec failed.
func startOperator(ctx context.Context, name string, cfg operatorConfig) *operator {
	opts := operatorproc.Options{
		Binary:         operatorBinary,
		Kubeconfig:     cluster.KubeconfigPath(),
		LogPath:        filepath.Join(workDir, "faults-"+name+".log"),
		Webhooks:       operatorproc.WebhooksOff,
		WatchNamespace: cfg.Namespace,
		// The fault specs' pods are kwok's: nothing answers at their
		// addresses, so no rollout may wait to read their counters.
		Env: append([]string{"WARMUP_INTERVAL=0"}, cfg.Env...),
	}
	if cfg.Webhooks {
		opts.Webhooks, opts.WebhookCertDir = operatorproc.WebhooksLocal, localWebhookCertDir()
	}
	if cfg.LeaderElect {
		opts.LeaderElectionNamespace = cfg.Namespace
	}
	op, err := operatorproc.Start(ctx, opts)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func(ctx SpecContext) {
		if CurrentSpecReport().Failed() {
			GinkgoWriter.Println(op.Tail(40))
		}
		// SIGTERM, as at the end of a pod; a killed operator is not
		// running and needs none.
		Expect(op.Stop(45 * time.Second)).To(Succeed())
		if cfg.Webhooks {
			// A killed operator in local mode leaves its fail-closed
			// webhook configurations behind; the next spec must not meet them.
			Expect(removeLocalWebhooks(ctx)).To(Succeed())
		}
	}, NodeTimeout(2*time.Minute))
	return &operator{Operator: op}
}

// kill sends SIGKILL, the crash no cleanup code sees.
func (o *operator) kill() { Expect(o.Kill()).To(Succeed()) }

// restart starts the killed operator again and waits until it is ready.
func (o *operator) restart(ctx context.Context) {
	Expect(o.Running()).To(BeFalse(), "restart is for a killed operator")
	Expect(o.Restart(ctx)).To(Succeed())
}

// rssKiB is the process's resident memory (VmRSS) in KiB.
func (o *operator) rssKiB() (int64, error) {
	u, err := o.Usage()
	return u.RSSBytes >> 10, err
}

// removeLocalWebhooks deletes the webhook configurations that an operator in
// local mode writes.
func removeLocalWebhooks(ctx context.Context) error {
	hooks, err := webhookroute.List(ctx, k8s)
	if err != nil {
		return err
	}
	for _, obj := range hooks.Objects() {
		if strings.HasPrefix(obj.GetName(), certs.LocalNamePrefix) {
			if err := client.IgnoreNotFound(k8s.Delete(ctx, obj)); err != nil {
				return err
			}
		}
	}
	return nil
}
