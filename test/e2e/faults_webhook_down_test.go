package e2e

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
	"github.com/example-inc/memcached-operator/api/v1/gen"
	"github.com/example-inc/memcached-operator/certs"
	"github.com/example-inc/memcached-operator/test/framework/webhookroute"
	"github.com/example-inc/memcached-operator/webhooks"
)

// The webhook names of config/webhook/manifests.yaml.
const (
	mutatingWebhook      = "mmemcached-v1.kb.io"
	mutatingScaleHook    = "mmemcachedscale-v1.kb.io"
	webhookDownNamespace = "webhook-down"
)

var _ = Describe("the webhooks down with failurePolicy Fail", Ordered, Label(labelHost, labelFaults), func() {
	const ns = webhookDownNamespace
	var (
		op       *operator
		existing = fakeMemcached(ns, "existing", gen.WithSize(2))
	)

	BeforeAll(func(ctx SpecContext) {
		cluster.namespace(ctx, ns, nil)
		op = startOperator(ctx, "webhook-down", operatorConfig{Namespace: ns, Webhooks: true})
		Expect(k8s.Create(ctx, existing)).To(Succeed())
		Expect(k8s.Create(ctx, fakeMemcached(ns, "too-big", gen.WithSize(40)))).To(MatchError(ContainSubstring(denied)))

		// kill -9, not SIGTERM: in local mode a stopping operator deletes
		// its webhook configurations, while an operator pod that dies leaves
		// the installed ones in place. That is the fault here.
		op.kill()
		hooks, err := webhookroute.Get(ctx, k8s, webhookroute.Names{
			Mutating:   []string{certs.LocalNamePrefix + "mutating-webhook-configuration"},
			Validating: []string{certs.LocalNamePrefix + "validating-webhook-configuration"},
		})
		Expect(err).NotTo(HaveOccurred())
		Expect(hooks.Hooks()).NotTo(BeEmpty())
		for _, h := range hooks.Hooks() {
			Expect(h.FailurePolicy).To(HaveValue(Equal(admissionregistrationv1.Fail)), h.Name)
		}
	}, NodeTimeout(3*time.Minute))

	DescribeTable("refuses every write with an error that names the webhook call",
		func(ctx SpecContext, write func(context.Context) error, webhook string) {
			err := write(ctx)
			Expect(err).To(MatchError(And(
				ContainSubstring(`failed calling webhook "`+webhook+`"`),
				ContainSubstring("connection refused"))))
			AddReportEntry("refused: "+CurrentSpecReport().LeafNodeText, err.Error())
		},
		Entry("a create without a size, which needs defaulting", func(ctx context.Context) error {
			return k8s.Create(ctx, fakeMemcached(ns, "no-size"))
		}, mutatingWebhook),
		Entry("a create of size 40, which validation would deny", func(ctx context.Context) error {
			return k8s.Create(ctx, fakeMemcached(ns, "size-40", gen.WithSize(40)))
		}, mutatingWebhook),
		Entry("a valid create of size 2", func(ctx context.Context) error {
			return k8s.Create(ctx, fakeMemcached(ns, "size-2", gen.WithSize(2)))
		}, mutatingWebhook),
		Entry("an update of spec.size to 40", func(ctx context.Context) error {
			mc := existing.DeepCopy()
			mc.Spec.Size = ptr.To[int32](40)
			return k8s.Update(ctx, mc)
		}, mutatingWebhook),
		Entry("a write of 40 to the scale subresource (kubectl scale)", func(ctx context.Context) error {
			scale := &autoscalingv1.Scale{Spec: autoscalingv1.ScaleSpec{Replicas: 40}}
			return k8s.SubResource("scale").Update(ctx, existing.DeepCopy(), client.WithSubResourceBody(scale))
		}, mutatingScaleHook),
	)

	It("stored nothing: the namespace holds only the Memcached made before, unchanged", func(ctx SpecContext) {
		list := &cachev1.MemcachedList{}
		Expect(k8s.List(ctx, list, client.InNamespace(ns))).To(Succeed())
		Expect(list.Items).To(HaveLen(1))
		Expect(list.Items[0].Name).To(Equal(existing.Name))
		Expect(list.Items[0].Spec.Size).To(HaveValue(BeEquivalentTo(2)))
		Expect(list.Items[0].Generation).To(Equal(existing.Generation))
	})

	It("defaults and validates again once the operator is back", func(ctx SpecContext) {
		start := time.Now()
		op.restart(ctx)
		mc := fakeMemcached(ns, "no-size")
		Expect(k8s.Create(ctx, mc)).To(Succeed())
		Expect(mc.Spec.Size).To(HaveValue(Equal(webhooks.DefaultSizePolicy().Default)))
		Expect(k8s.Create(ctx, fakeMemcached(ns, "size-40", gen.WithSize(40)))).To(MatchError(ContainSubstring(denied)))
		AddReportEntry("webhooks answering again after the restart", time.Since(start).Round(time.Millisecond))
	}, NodeTimeout(3*time.Minute))
})
