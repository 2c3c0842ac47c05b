package devcluster

import (
	"net/netip"
	"os/exec"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/example-inc/memcached-operator/hack/local-cluster/images"
	"github.com/example-inc/memcached-operator/hack/local-cluster/localcluster"
	"github.com/example-inc/memcached-operator/test/framework/harness"
)

// A new user's `make run` keeps the cluster's objects in its directory, and
// a later `make run LOCAL_CLUSTER_NODE=real` starts from them. The kwok node
// of the first run must not take the pods meant to run, and the addresses
// kwok gave pods must not lead off the machine.
var _ = It("restarts a kept kwok cluster with the real node: the kwok node is gone, the pods run for real, kwok's range stays local",
	func(ctx SpecContext) {
		dir := filepath.Join(workDir, "kept-kwok")
		labels := map[string]string{"app": "kept"}
		// servingPods waits for the Deployment's two pods, Running and
		// Ready with an address, and returns them.
		servingPods := func(cs kubernetes.Interface) []corev1.Pod {
			GinkgoHelper()
			var pods []corev1.Pod
			eventually(ctx, func(g Gomega) {
				list, err := cs.CoreV1().Pods(metav1.NamespaceDefault).List(ctx, metav1.ListOptions{LabelSelector: "app=kept"})
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(list.Items).To(HaveLen(2))
				for _, p := range list.Items {
					g.Expect(p.DeletionTimestamp).To(BeNil(), "pod %s", p.Name)
					g.Expect(p.Status.Phase).To(Equal(corev1.PodRunning), "pod %s", p.Name)
					g.Expect(harness.PodReady(&p)).To(BeTrue(), "pod %s ready", p.Name)
					g.Expect(p.Status.PodIP).NotTo(BeEmpty(), "pod %s", p.Name)
				}
				pods = list.Items
			}).Should(Succeed())
			return pods
		}

		By("a first run on kwok alone, as make run starts it: the pods are on kwok-node-0")
		kwok := harness.StartCluster(ctx, localcluster.Options{Dir: dir})
		cs := kubernetes.NewForConfigOrDie(kwok.RestConfig())
		_, err := cs.AppsV1().Deployments(metav1.NamespaceDefault).Create(ctx, &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: "kept"},
			Spec: appsv1.DeploymentSpec{
				Replicas: ptr.To[int32](2),
				Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{
						Name: "memcached", Image: images.MemcachedTag, Command: []string{"memcached", "--memory-limit=16"}}}},
				},
			},
		}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		var kwokIPs []string
		for _, p := range servingPods(cs) {
			Expect(p.Spec.NodeName).To(Equal("kwok-node-0"))
			kwokIPs = append(kwokIPs, p.Status.PodIP)
		}
		Expect(kwok.Stop()).To(Succeed())

		By("the same directory, kept, with the real node")
		memcached, err := images.Memcached(filepath.Join(workDir, "images", "memcached"), images.MemcachedTag)
		Expect(err).NotTo(HaveOccurred())
		withNode := harness.StartCluster(ctx, localcluster.Options{Dir: dir, RealNode: true, KeepState: true})
		Expect(withNode.ImportImages(ctx, memcached.Archive)).To(Succeed())
		cs = kubernetes.NewForConfigOrDie(withNode.RestConfig())
		_, err = cs.CoreV1().Nodes().Get(ctx, "kwok-node-0", metav1.GetOptions{})
		Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the kwok node of the first run: %v", err)

		start := time.Now()
		for _, p := range servingPods(cs) {
			Expect(p.Spec.NodeName).To(Equal(localcluster.RealNodeName), "pod %s", p.Name)
			Expect(netip.MustParsePrefix("10.88.0.0/16").Contains(netip.MustParseAddr(p.Status.PodIP))).To(BeTrue(),
				"pod %s has %s, an address of the real node's bridge", p.Name, p.Status.PodIP)
		}
		AddReportEntry("kept Deployment serving on the real node after the restart", time.Since(start).Round(time.Millisecond).String())

		By("kwok's addresses route to the bridge, not off the machine (asked of the routing table, never connected to)")
		for _, ip := range kwokIPs {
			out, err := exec.CommandContext(ctx, "ip", "route", "get", ip).CombinedOutput()
			Expect(err).NotTo(HaveOccurred(), "%s", out)
			// localcluster0 is the real node's bridge (node_network.go).
			Expect(string(out)).To(ContainSubstring(" dev localcluster0 "), "ip route get %s", ip)
		}
	}, SpecTimeout(6*time.Minute))
