package e2e

import (
	"context"
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
	"github.com/example-inc/memcached-operator/api/v1/gen"
	"github.com/example-inc/memcached-operator/hack/local-cluster/localcluster"
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
