package e2e

import (
	"context"
	"fmt"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/example-inc/memcached-operator/api/v1/gen"
	"github.com/example-inc/memcached-operator/test/framework/manifest"
)

// warningRecorder keeps the warnings the API server returns with a
// response (what kubectl prints as "Warning: ..."). For a Deployment whose
// pods break the namespace's Pod Security level, that is the only signal
// at create time: enforcement itself applies to the pods.
type warningRecorder struct {
	mu    sync.Mutex
	texts []string
}

func (w *warningRecorder) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.texts = append(w.texts, text)
}

func (w *warningRecorder) warnings() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.texts...)
}

// clientsetWithWarnings is an admin clientset whose warnings go to the
// returned recorder.
func clientsetWithWarnings() (kubernetes.Interface, *warningRecorder) {
	w := &warningRecorder{}
	cfg := cluster.RestConfig()
	cfg.WarningHandler = w
	return kubernetes.NewForConfigOrDie(cfg), w
}

// createRestrictedNamespace creates a namespace that enforces the restricted
// Pod Security profile, and warns about it, at the latest version.
// It is deleted when the calling node ends.
func createRestrictedNamespace(ctx context.Context, name string) {
	GinkgoHelper()
	cluster.namespace(ctx, name, map[string]string{
		"pod-security.kubernetes.io/enforce":         "restricted",
		"pod-security.kubernetes.io/enforce-version": "latest",
		"pod-security.kubernetes.io/warn":            "restricted",
		"pod-security.kubernetes.io/warn-version":    "latest",
	})
}

// refusedPodCreations are the signs of pods a ReplicaSet in ns could not
// create: ReplicaFailure conditions and FailedCreate events.
func refusedPodCreations(ctx context.Context, ns string) ([]string, error) {
	var out []string
	rss, err := cs.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for _, rs := range rss.Items {
		for _, c := range rs.Status.Conditions {
			if c.Type == appsv1.ReplicaSetReplicaFailure && c.Status == corev1.ConditionTrue {
				out = append(out, fmt.Sprintf("ReplicaSet %s: %s: %s", rs.Name, c.Reason, c.Message))
			}
		}
	}
	events, err := cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "reason=FailedCreate"})
	if err != nil {
		return nil, err
	}
	for _, e := range events.Items {
		out = append(out, fmt.Sprintf("event on %s %s: %s", e.InvolvedObject.Kind, e.InvolvedObject.Name, e.Message))
	}
	return out, nil
}

// expectReadyPods waits until the pods d selects number d's replicas and
// are all Ready, and no pod creation was refused.
func expectReadyPods(ctx context.Context, ns, name string) {
	GinkgoHelper()
	eventually(ctx, func(g Gomega) {
		d, err := cs.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
		g.Expect(err).NotTo(HaveOccurred())
		pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(pods.Items).To(HaveLen(int(ptr.Deref(d.Spec.Replicas, 1))))
		for _, p := range pods.Items {
			g.Expect(p.Status.Conditions).To(ContainElement(And(
				HaveField("Type", corev1.PodReady), HaveField("Status", corev1.ConditionTrue))), "pod %s", p.Name)
		}
	}).Should(Succeed())
	Expect(refusedPodCreations(ctx, ns)).To(BeEmpty())
}

// podSecurityRestrictedSpecs are the "Pod Security restricted" specs of the security container (security_test.go).
func podSecurityRestrictedSpecs() {
	Describe("Pod Security restricted", func() {
		It("admits and runs the memcached pods the operator creates", func(ctx SpecContext) {
			const ns = "restricted-memcached"
			createRestrictedNamespace(ctx, ns)
			Expect(k8s.Create(ctx, gen.Memcached(ns, "cache", gen.WithSize(3)))).To(Succeed())
			eventually(ctx, func() error {
				_, err := cs.AppsV1().Deployments(ns).Get(ctx, "cache", metav1.GetOptions{})
				return err
			}).Should(Succeed())
			expectReadyPods(ctx, ns, "cache")
		}, SpecTimeout(3*readyTimeout))

		DescribeTable("the manager pod",
			func(ctx SpecContext, ns string, manager func() (*appsv1.Deployment, error), admitted bool) {
				d, err := manager()
				Expect(err).NotTo(HaveOccurred())
				createRestrictedNamespace(ctx, ns)
				d.Namespace = ns
				d.ResourceVersion = ""
				if sa := d.Spec.Template.Spec.ServiceAccountName; sa != "" {
					Expect(k8s.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: sa}})).To(Succeed())
				}

				// Created for real, not dry-run, on the kwok node, which runs
				// the pods without their image or Secrets: their admission
				// is seen as well as the Deployment's. Where a pod runs
				// changes nothing Pod Security checks.
				pod := &d.Spec.Template.Spec
				pod.NodeSelector, pod.Tolerations = onFakeNode()
				clientset, recorder := clientsetWithWarnings()
				_, err = clientset.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{})
				Expect(err).NotTo(HaveOccurred())
				if admitted {
					Expect(recorder.warnings()).To(BeEmpty())
					expectReadyPods(ctx, ns, d.Name)
					return
				}
				Expect(recorder.warnings()).To(ContainElement(ContainSubstring("would violate PodSecurity")))
				eventually(ctx, func() ([]string, error) { return refusedPodCreations(ctx, ns) }).Should(ContainElement(ContainSubstring("violates PodSecurity")))
			},
			Entry("of kustomize build config/default is admitted and runs", "restricted-config-default",
				func() (*appsv1.Deployment, error) {
					return deploymentIn(configDefaultObjects, manifest.ManagerDeployment)
				}, true),
			Entry("of the CSV's install strategy is admitted and runs", "restricted-csv",
				func() (*appsv1.Deployment, error) {
					b, err := manifest.Bundle()
					if err != nil {
						return nil, err
					}
					return manifest.Deployment(b.CSV)
				}, true),
			// The control: the same checks see a refusal when there is one.
			Entry("made privileged is warned about and its pods refused", "restricted-control",
				func() (*appsv1.Deployment, error) {
					d := gen.UnrelatedDeployment("", "privileged", 1)
					sc := d.Spec.Template.Spec.Containers[0].SecurityContext
					sc.Privileged, sc.AllowPrivilegeEscalation = ptr.To(true), nil
					return d, nil
				}, false),
		)
	})
}
