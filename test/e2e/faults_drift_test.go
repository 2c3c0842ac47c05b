package e2e

import (
	"context"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

var _ = Describe("drift of the owned objects", Ordered, Label(labelHost, labelFaults), func() {
	const (
		ns   = "drift"
		name = "cache"
		// proxy is given to the operator so that it manages an env
		// variable in the pod template.
		proxy = "http://proxy.internal.example:3128"
		// handAnnotation is added by hand to the Deployment; the operator
		// does not own it and must leave it.
		handAnnotation = "example.com/added-by-hand"
	)
	var (
		set  *memcachedSet
		want *appsv1.Deployment // as the operator wrote it
		key  = client.ObjectKey{Namespace: ns, Name: name}
	)

	BeforeAll(func(ctx SpecContext) {
		set = newMemcachedSet(ctx, ns, 0)
		set.templateChanges = true
		startOperator(ctx, "drift", operatorConfig{Namespace: ns, Webhooks: true, Env: []string{"HTTPS_PROXY=" + proxy}})
		set.add(ctx, name, 2)
		set.waitConverged(ctx)
		want = &appsv1.Deployment{}
		Expect(k8s.Get(ctx, key, want)).To(Succeed())
		Expect(want.Spec.Template.Spec.Containers[0].Env).To(ContainElement(corev1.EnvVar{Name: "HTTPS_PROXY", Value: proxy}))

		patch := fmt.Appendf(nil, `{"metadata":{"annotations":{%q:"kept"}}}`, handAnnotation)
		Expect(k8s.Patch(ctx, want.DeepCopy(), client.RawPatch(types.MergePatchType, patch))).To(Succeed())
	}, NodeTimeout(5*time.Minute))

	DescribeTable("is undone",
		// recreated says whether the repair is a new object (a deleted one
		// comes back with a new UID) or the same one edited back.
		func(ctx SpecContext, obj client.Object, drift func(context.Context, client.Object) error, recreated bool) {
			Expect(k8s.Get(ctx, key, obj)).To(Succeed())
			uid := obj.GetUID()
			start := time.Now()
			Expect(drift(ctx, obj)).To(Succeed())

			Eventually(func(g Gomega) {
				g.Expect(k8s.Get(ctx, key, obj)).To(Succeed())
				if recreated {
					g.Expect(obj.GetUID()).NotTo(Equal(uid), "a new object in place of the deleted one")
				} else {
					g.Expect(obj.GetUID()).To(Equal(uid), "the same object, edited back")
				}
				d := &appsv1.Deployment{}
				g.Expect(k8s.Get(ctx, key, d)).To(Succeed())
				g.Expect(d.Spec.Replicas).To(Equal(want.Spec.Replicas))
				g.Expect(d.Spec.Template.Spec).To(Equal(want.Spec.Template.Spec))
				if d.UID == want.UID {
					g.Expect(d.Annotations).To(HaveKeyWithValue(handAnnotation, "kept"))
				}
				problems, err := set.problems(ctx)
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(problems).To(BeEmpty())
			}).WithContext(ctx).WithTimeout(2 * time.Minute).WithPolling(200 * time.Millisecond).Should(Succeed())
			AddReportEntry(fmt.Sprintf("drift %s: restored", CurrentSpecReport().LeafNodeText),
				fmt.Sprintf("%s (recreated: %t)", time.Since(start).Round(time.Millisecond), recreated))
		},
		Entry("Deployment scaled by hand", &appsv1.Deployment{}, update(func(d *appsv1.Deployment) {
			d.Spec.Replicas = ptr.To[int32](5)
		}), false),
		Entry("Deployment image edited", &appsv1.Deployment{}, update(func(d *appsv1.Deployment) {
			d.Spec.Template.Spec.Containers[0].Image = "docker.io/library/memcached:1.5-alpine"
		}), false),
		Entry("Deployment proxy env edited", &appsv1.Deployment{}, update(func(d *appsv1.Deployment) {
			for i, e := range d.Spec.Template.Spec.Containers[0].Env {
				if e.Name == "HTTPS_PROXY" {
					d.Spec.Template.Spec.Containers[0].Env[i].Value = "http://elsewhere.example:3128"
				}
			}
		}), false),
		Entry("Service deleted", &corev1.Service{}, remove, true),
		Entry("PodDisruptionBudget deleted", &policyv1.PodDisruptionBudget{}, remove, true),
		// Last: the hand-added annotation goes with it.
		Entry("Deployment deleted", &appsv1.Deployment{}, remove, true),
	)
})

// update returns a drift that edits a Deployment by hand, as kubectl edit
// does (an update, whose field manager is not the operator's), again on a
// conflict with the Deployment controller's status writes, as kubectl does.
func update(edit func(*appsv1.Deployment)) func(context.Context, client.Object) error {
	return func(ctx context.Context, obj client.Object) error {
		d := obj.(*appsv1.Deployment)
		return retry.RetryOnConflict(retry.DefaultRetry, func() error {
			if err := k8s.Get(ctx, client.ObjectKeyFromObject(d), d); err != nil {
				return err
			}
			edit(d)
			return k8s.Update(ctx, d)
		})
	}
}

// remove is the drift of deleting the object, its dependents with it.
func remove(ctx context.Context, obj client.Object) error {
	return k8s.Delete(ctx, obj, client.PropagationPolicy("Background"))
}
