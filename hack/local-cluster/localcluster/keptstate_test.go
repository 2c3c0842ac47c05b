package localcluster_test

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/example-inc/memcached-operator/api/v1/gen"
	"github.com/example-inc/memcached-operator/hack/local-cluster/localcluster"
	"github.com/example-inc/memcached-operator/hack/repo"
)

// A kept state holds the nodes of the cluster that wrote it, which may have
// had more fake nodes, or a real node (then its fake nodes are tainted).
// The restarted cluster has the fake nodes its own options say, and the
// pods of the removed ones run again on those.
var _ = It("restarts from a kept state with only the fake nodes it asks for, as it would make them", func(ctx SpecContext) {
	dir := GinkgoT().TempDir()
	start := func(opts localcluster.Options) (*localcluster.Cluster, kubernetes.Interface) {
		GinkgoHelper()
		opts.BinDir, opts.Dir = repo.ControlPlaneDir(), dir
		c, err := localcluster.New(opts)
		Expect(err).NotTo(HaveOccurred())
		Expect(c.Start(ctx)).To(Succeed())
		DeferCleanup(c.Stop)
		return c, kubernetes.NewForConfigOrDie(c.RestConfig())
	}
	updateNode := func(cs kubernetes.Interface, name string, change func(*corev1.Node)) {
		GinkgoHelper()
		Eventually(func(ctx context.Context) error {
			n, err := cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			change(n)
			_, err = cs.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{})
			return err
		}).WithContext(ctx).WithTimeout(readyTimeout).WithPolling(poll).Should(Succeed())
	}
	podNodes := func(cs kubernetes.Interface) func(context.Context) ([]string, error) {
		return func(ctx context.Context) ([]string, error) {
			pods, err := cs.CoreV1().Pods(metav1.NamespaceDefault).List(ctx, metav1.ListOptions{LabelSelector: "app=kept"})
			if err != nil {
				return nil, err
			}
			var nodes []string
			for _, p := range pods.Items {
				nodes = append(nodes, p.Spec.NodeName)
			}
			return nodes, nil
		}
	}

	By("two fake nodes, the pods on the second, and the first tainted as beside a real node")
	first, cs := start(localcluster.Options{Nodes: 2})
	updateNode(cs, "kwok-node-0", func(n *corev1.Node) { n.Spec.Unschedulable = true })
	_, err := cs.AppsV1().Deployments(metav1.NamespaceDefault).Create(ctx, gen.UnrelatedDeployment(metav1.NamespaceDefault, "kept", 3), metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
	expectReadyReplicas(ctx, cs, metav1.NamespaceDefault, "kept", 3)
	Expect(podNodes(cs)(ctx)).To(HaveEach("kwok-node-1"))
	updateNode(cs, "kwok-node-0", func(n *corev1.Node) {
		n.Spec.Unschedulable = false
		n.Spec.Taints = []corev1.Taint{localcluster.FakeNodeTaint}
	})
	Expect(first.Stop()).To(Succeed())

	By("restarted with one fake node: the second is gone, the first untainted, the pods on it")
	_, cs = start(localcluster.Options{Nodes: 1, KeepState: true})
	_, err = cs.CoreV1().Nodes().Get(ctx, "kwok-node-1", metav1.GetOptions{})
	Expect(apierrors.IsNotFound(err)).To(BeTrue(), "kwok-node-1: %v", err)
	node, err := cs.CoreV1().Nodes().Get(ctx, "kwok-node-0", metav1.GetOptions{})
	Expect(err).NotTo(HaveOccurred())
	Expect(node.Spec.Taints).To(BeEmpty())
	begin := time.Now()
	expectReadyReplicas(ctx, cs, metav1.NamespaceDefault, "kept", 3)
	Eventually(podNodes(cs)).WithContext(ctx).WithTimeout(readyTimeout).WithPolling(poll).Should(
		And(HaveLen(3), HaveEach("kwok-node-0")))
	AddReportEntry("pods of the removed node ready again", time.Since(begin).Round(time.Millisecond).String())
}, SpecTimeout(3*time.Minute))
