package localcluster

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
)

// fakeNodeLabelSelector selects the nodes this package creates.
const fakeNodeLabelSelector = "type=kwok"

// FakeNodeLabels are on every fake node: a pod's node selector of these,
// with a toleration of FakeNodeTaint, puts it on kwok beside a real node.
var FakeNodeLabels = map[string]string{"type": "kwok"}

// nodeName returns the name of the i-th fake node (0-based).
func nodeName(i int) string {
	return fmt.Sprintf("kwok-node-%d", i)
}

// FakeNodeTaint is on the fake nodes of a cluster that has a real node too,
// so that pods run for real unless they tolerate it.
var FakeNodeTaint = corev1.Taint{Key: fakeNodeAnnotation, Value: fakeNodeValue, Effect: corev1.TaintEffectNoSchedule}

// fakeNode is a node as kwok expects it. It looks like a real Linux node to
// the scheduler, so pods need no tolerations or node selectors, unless
// taint puts FakeNodeTaint on it.
func fakeNode(name string, taint bool) *corev1.Node {
	n := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: name,
			Annotations: map[string]string{
				fakeNodeAnnotation: fakeNodeValue,
				// No TTL: clients need not cache anything about a fake node.
				"node.alpha.kubernetes.io/ttl": "0",
			},
			Labels: map[string]string{
				"type":                 FakeNodeLabels["type"],
				corev1.LabelHostname:   name,
				corev1.LabelOSStable:   "linux",
				corev1.LabelArchStable: "amd64",
			},
		},
	}
	if taint {
		n.Spec.Taints = []corev1.Taint{FakeNodeTaint}
	}
	return n
}

// createNodes makes the fake nodes what Options say: n of them, with their
// capacity, tainted when taint is set and untainted otherwise, and no
// others. The status goes in a second call because the API server drops
// status on create. It runs before the controller manager, the scheduler
// and kwok start, so that kwok's first status update already sees the
// capacity and nothing is scheduled onto a node before it is as it should
// be; the retries cover the node controllers should they be running anyway.
//
// A kept state (Options.KeepState) holds the nodes of the earlier cluster,
// which may have had more fake nodes, or untainted ones where this one has
// a real node: kwok would keep them Ready, and pods meant to run for real
// would land on them, Running with nothing running.
func createNodes(ctx context.Context, cs kubernetes.Interface, n int, capacity corev1.ResourceList, taint bool) error {
	if err := removeFakeNodesBeyond(ctx, cs, n); err != nil {
		return err
	}
	for i := range n {
		name := nodeName(i)
		if _, err := cs.CoreV1().Nodes().Create(ctx, fakeNode(name, taint), metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating node %s: %w", name, err)
		}
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			node, err := cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if want := fakeNode(name, taint).Spec.Taints; !equality.Semantic.DeepEqual(node.Spec.Taints, want) {
				node.Spec.Taints = want
				if node, err = cs.CoreV1().Nodes().Update(ctx, node, metav1.UpdateOptions{}); err != nil {
					return err
				}
			}
			node.Status.Capacity = capacity.DeepCopy()
			node.Status.Allocatable = capacity.DeepCopy()
			_, err = cs.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{})
			return err
		})
		if err != nil {
			return fmt.Errorf("setting taints and capacity of node %s: %w", name, err)
		}
	}
	return nil
}

// removeFakeNodesBeyond deletes the fake nodes a kept state holds beyond
// the first n, with the pods bound to them. The pods go at once: no kubelet
// would confirm their end, and their controllers make them anew on the
// nodes that remain.
func removeFakeNodesBeyond(ctx context.Context, cs kubernetes.Interface, n int) error {
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: fakeNodeLabelSelector})
	if err != nil {
		return err
	}
	keep := map[string]bool{}
	for i := range n {
		keep[nodeName(i)] = true
	}
	for _, node := range nodes.Items {
		if keep[node.Name] || node.Annotations[fakeNodeAnnotation] != fakeNodeValue {
			continue
		}
		pods, err := cs.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{
			FieldSelector: fields.OneTermEqualSelector("spec.nodeName", node.Name).String()})
		if err != nil {
			return err
		}
		for _, p := range pods.Items {
			err := cs.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
			if err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("deleting pod %s/%s of the removed node %s: %w", p.Namespace, p.Name, node.Name, err)
			}
		}
		if err := cs.CoreV1().Nodes().Delete(ctx, node.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting node %s: %w", node.Name, err)
		}
	}
	return nil
}

// nodesReady succeeds once n fake nodes report Ready, which means kwok is up
// and has processed them.
func nodesReady(ctx context.Context, cs kubernetes.Interface, n int) error {
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: fakeNodeLabelSelector})
	if err != nil {
		return err
	}
	ready := 0
	for _, node := range nodes.Items {
		for _, c := range node.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
				ready++
			}
		}
	}
	if ready < n {
		return fmt.Errorf("%d of %d nodes ready", ready, n)
	}
	return nil
}

// defaultServiceAccount succeeds once the controller manager has created the
// default ServiceAccount of the default namespace: proof that its
// controllers are syncing, not merely that its health endpoint answers.
func defaultServiceAccount(ctx context.Context, cs kubernetes.Interface) error {
	_, err := cs.CoreV1().ServiceAccounts(metav1.NamespaceDefault).Get(ctx, "default", metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("default ServiceAccount not created yet")
	}
	return err
}
