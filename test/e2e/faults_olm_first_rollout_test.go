package e2e

import (
	"os"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/operator-framework/api/crds"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/example-inc/memcached-operator/api/v1/gen"
)

// OLM writes a new CSV's Deployment before it applies the Subscription's
// config.env, and rolls it again with it later (operator-lifecycle-manager
// #2100); how long the first pod lives depends on a race inside OLM, so
// test/e2e cannot count on meeting it. Here the operator starts as that pod
// does: OLM's variables set, the CSV's memcached image, none of the
// Subscription's configuration in its environment.
var _ = Describe("an operator started by OLM before OLM applied its Subscription's configuration", Ordered, Label(labelHost, labelFaults), func() {
	const (
		ns           = "olm-first-rollout"
		csv          = "memcached-operator.v0.2.0"
		csvImage     = "docker.io/library/memcached:1.6.38"
		mirrorImage  = "mirror.example.com/library/memcached:1.6.38"
		maxSize      = "5"
		mirrorSecret = "mirror-credentials"
	)
	var op *operator

	BeforeAll(func(ctx SpecContext) {
		cluster.namespace(ctx, ns, nil)
		_, err := envtest.InstallCRDs(cluster.RestConfig(), envtest.CRDInstallOptions{
			CRDs: []*apiextensionsv1.CustomResourceDefinition{crds.Subscription()},
		})
		Expect(err).NotTo(HaveOccurred())
		sub := &operatorsv1alpha1.Subscription{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "memcached-operator"},
			Spec: &operatorsv1alpha1.SubscriptionSpec{
				CatalogSource: "catalog", CatalogSourceNamespace: ns, Package: "memcached-operator", Channel: "stable",
				Config: &operatorsv1alpha1.SubscriptionConfig{Env: []corev1.EnvVar{
					{Name: "RELATED_IMAGE_MEMCACHED", Value: mirrorImage},
					{Name: "MEMCACHED_MAX_SIZE", Value: maxSize},
					{Name: "MIRROR_TOKEN", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
						LocalObjectReference: corev1.LocalObjectReference{Name: mirrorSecret}, Key: "token"}}},
				}},
			},
		}
		Expect(k8s.Create(ctx, sub)).To(Succeed())
		// Mid-upgrade: the new CSV is being installed, the old one still is.
		sub.Status = operatorsv1alpha1.SubscriptionStatus{
			CurrentCSV: csv, InstalledCSV: "memcached-operator.v0.1.0", LastUpdated: metav1.Now(),
		}
		Expect(k8s.Status().Update(ctx, sub)).To(Succeed())

		op = startOperator(ctx, "olm-first-rollout", operatorConfig{Namespace: ns, Webhooks: true, Env: []string{
			"OPERATOR_CONDITION_NAME=" + csv, "POD_NAMESPACE=" + ns, "RELATED_IMAGE_MEMCACHED=" + csvImage,
		}})
	}, NodeTimeout(3*time.Minute))

	It("refuses a size above the Subscription's maximum, which the default policy admits", func(ctx SpecContext) {
		err := k8s.Create(ctx, fakeMemcached(ns, "six", gen.WithSize(6)))
		Expect(err).To(MatchError(ContainSubstring("spec.size: Invalid value: 6: must be no more than " + maxSize)))
		Expect(k8s.Create(ctx, fakeMemcached(ns, "five", gen.WithSize(5)))).To(Succeed())
	})

	It("deploys the Subscription's memcached image, not the CSV's", func(ctx SpecContext) {
		Eventually(func(g Gomega) {
			d := &appsv1.Deployment{}
			g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "five"}, d)).To(Succeed())
			g.Expect(d.Spec.Template.Spec.Containers).To(ContainElement(And(HaveField("Name", "memcached"), HaveField("Image", mirrorImage))))
		}).WithContext(ctx).WithTimeout(time.Minute).Should(Succeed())
	})

	It("logs the names it took from the Subscription and the one it could not read, and no value", func() {
		log, err := os.ReadFile(op.Options().LogPath)
		Expect(err).NotTo(HaveOccurred())
		Expect(string(log)).To(And(
			MatchRegexp(`took from the Subscription.*"set":\["RELATED_IMAGE_MEMCACHED","MEMCACHED_MAX_SIZE"\]`),
			MatchRegexp(`from a Secret or ConfigMap.*"variables":\["MIRROR_TOKEN"\]`),
		))
		for _, line := range strings.Split(string(log), "\n") {
			if strings.Contains(line, `"logger":"subscription-config"`) {
				Expect(line).NotTo(ContainSubstring(mirrorImage), "a value logged")
			}
		}
	})
})
