package controllers_test

import (
	"net/http"
	"time"

	cmapi "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	cmmeta "github.com/cert-manager/cert-manager/pkg/apis/meta/v1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/types"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
	"github.com/example-inc/memcached-operator/api/v1/gen"
	"github.com/example-inc/memcached-operator/controllers"
	"github.com/example-inc/memcached-operator/hack/repo"
)

// cert-manager's CRDs are installed by this container only, and no
// cert-manager runs: the suite checks the operator's part, the Certificate
// and what the Memcached says of it. test/e2e has real cert-manager issue
// and renew it.
var _ = Describe("certificates from spec.tls.issuerRef", Ordered, func() {
	BeforeAll(func() {
		Expect(cmapi.AddToScheme(scheme)).To(Succeed())
		dir, err := repo.CertManagerCRDDir()
		Expect(err).NotTo(HaveOccurred())
		installAPI(dir, controllers.CertManagerServed)
	})
	// The first spec restarts the operator with CertManager, as an admin
	// does after installing cert-manager; the later specs run with it.
	AfterAll(restoreOperator)

	certificateOf := func(g Gomega, mc *cachev1.Memcached) *cmapi.Certificate {
		return objectOf(g, mc, &cmapi.Certificate{})
	}
	certificateReady := func(mc *cachev1.Memcached) func(Gomega) *metav1.Condition {
		return conditionOf(mc, cachev1.ConditionCertificateReady)
	}
	pending := func(mc *cachev1.Memcached) types.GomegaMatcher {
		return condition(metav1.ConditionFalse, cachev1.ReasonCertificatePending,
			`waiting for cert-manager to issue Certificate "`+mc.Name+`" from Issuer "memcached-ca"`)
	}
	withIssuer := []gen.MemcachedOption{gen.WithSize(1), gen.WithTLS("cache-tls"), gen.WithIssuer(cmapi.IssuerKind, "memcached-ca")}

	It("says so where cert-manager is not served, runs the rest, and makes the Certificate once it is", func() {
		mc := createMemcached(watchedNS, withIssuer...)
		Eventually(certificateReady(mc)).Should(condition(metav1.ConditionFalse, cachev1.ReasonCertManagerNotServed,
			`spec.tls.issuerRef needs cert-manager's Certificate API (cert-manager.io/v1), which the cluster did not serve when the operator started: `+
				`install cert-manager and restart the operator, or remove issuerRef and write Secret "cache-tls" yourself`))
		Eventually(degradedOf(mc)).Should(reconciledCondition())
		Expect(k8s.Get(ctx, key(mc), &appsv1.Deployment{})).To(Succeed(), "the Deployment, as without an issuerRef")
		Expect(k8s.Get(ctx, key(mc), &cmapi.Certificate{})).To(Satisfy(apierrors.IsNotFound))

		op.stop()
		opts := suiteOptions()
		opts.CertManager = true
		op = startOperator(opts)
		Eventually(certificateOf).WithArguments(mc).Should(HaveField("Spec.SecretName", "cache-tls"))
		Eventually(certificateReady(mc)).Should(pending(mc))
	})

	It("keeps a Certificate of the Memcached, its own, written once, Ready when cert-manager says so", func() {
		mc := createMemcached(watchedNS, withIssuer...)
		Expect(k8s.Get(ctx, key(mc), mc)).To(Succeed())
		cert := &cmapi.Certificate{}
		Eventually(func(g Gomega) { cert = certificateOf(g, mc) }).Should(Succeed())
		Expect(metav1.IsControlledBy(cert, mc)).To(BeTrue())
		Expect(cert.Spec.IssuerRef).To(Equal(cmmeta.IssuerReference{Name: "memcached-ca", Kind: cmapi.IssuerKind, Group: "cert-manager.io"}))
		Expect(cert.Spec.DNSNames).To(ConsistOf(mc.Name+"."+watchedNS+".svc", mc.Name+"."+watchedNS+".svc.cluster.local",
			"*."+mc.Name+"."+watchedNS+".svc", "*."+mc.Name+"."+watchedNS+".svc.cluster.local"))
		Eventually(certificateReady(mc)).Should(pending(mc))

		By("reporting cert-manager's Ready condition, as its readiness controller sets it")
		cert.Status.Conditions = []cmapi.CertificateCondition{{Type: cmapi.CertificateConditionReady, Status: cmmeta.ConditionTrue,
			ObservedGeneration: cert.Generation, Reason: "Ready", Message: "Certificate is up to date and has not expired",
			LastTransitionTime: &metav1.Time{Time: metav1.Now().Time}}}
		Expect(k8s.Status().Update(ctx, cert)).To(Succeed())
		Eventually(certificateReady(mc)).Should(condition(metav1.ConditionTrue, cachev1.ReasonCertificateIssued,
			`Certificate "`+mc.Name+`" is issued into Secret "cache-tls"`))

		By("writing it no more when the Memcached changes in nothing it holds")
		path := "/apis/" + cmapi.SchemeGroupVersion.String() + "/namespaces/" + mc.Namespace + "/certificates/" + mc.Name
		Expect(op.requests.To(http.MethodPatch, path)).To(Equal(1), "the Certificate's creation")
		before := reconciles()
		setSize(mc, 2)
		settled(before, 1)
		Expect(op.requests.To(http.MethodPatch, path)).To(Equal(1))
	})

	It("repairs a hand edit of its names, keeps a user's own field, and follows a new issuer", func() {
		mc := createMemcached(watchedNS, withIssuer...)
		cert := &cmapi.Certificate{}
		Eventually(func(g Gomega) { cert = certificateOf(g, mc) }).Should(Succeed())
		want := cert.Spec.DNSNames
		cert.Spec.DNSNames = []string{"evil.example.com"}
		cert.Spec.Duration = &metav1.Duration{Duration: 90 * 24 * time.Hour}
		Expect(k8s.Update(ctx, cert)).To(Succeed())
		Eventually(func(g Gomega) []string { return certificateOf(g, mc).Spec.DNSNames }).Should(Equal(want))
		Expect(certificateOf(Default, mc).Spec.Duration).To(Equal(cert.Spec.Duration), "the user's duration")

		Expect(k8s.Patch(ctx, gen.Memcached(mc.Namespace, mc.Name), client.RawPatch("application/merge-patch+json",
			[]byte(`{"spec":{"tls":{"issuerRef":{"kind":"ClusterIssuer","name":"corp-ca"}}}}`)))).To(Succeed())
		Eventually(func(g Gomega) cmmeta.IssuerReference { return certificateOf(g, mc).Spec.IssuerRef }).
			Should(Equal(cmmeta.IssuerReference{Name: "corp-ca", Kind: cmapi.ClusterIssuerKind, Group: "cert-manager.io"}))
	})

	It("deletes the Certificate when issuerRef is removed, and the condition with it", func() {
		mc := createMemcached(watchedNS, withIssuer...)
		Eventually(certificateOf).WithArguments(mc).Should(Not(BeNil()))
		Expect(k8s.Patch(ctx, gen.Memcached(mc.Namespace, mc.Name), client.RawPatch("application/merge-patch+json",
			[]byte(`{"spec":{"tls":{"issuerRef":null}}}`)))).To(Succeed())
		Eventually(getOf(mc, &cmapi.Certificate{})).Should(Satisfy(apierrors.IsNotFound))
		Eventually(certificateReady(mc)).Should(BeNil())
	})

	It("leaves someone else's Certificate of the name alone and creates nothing", func() {
		theirs := &cmapi.Certificate{
			ObjectMeta: metav1.ObjectMeta{Namespace: watchedNS, Name: "their-cert"},
			Spec: cmapi.CertificateSpec{SecretName: "theirs", DNSNames: []string{"theirs.example.com"},
				IssuerRef: cmmeta.IssuerReference{Name: "their-ca"}},
		}
		mc := blockedBy(theirs, "Certificate", withIssuer...)
		Expect(k8s.Get(ctx, key(mc), &appsv1.Deployment{})).To(Satisfy(apierrors.IsNotFound), "nothing half-made")
		expectUntouched(theirs)
	})
})
