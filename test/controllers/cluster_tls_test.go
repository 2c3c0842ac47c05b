package controllers_test

import (
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	configv1 "github.com/openshift/api/config/v1"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
	"github.com/example-inc/memcached-operator/api/v1/gen"
	"github.com/example-inc/memcached-operator/hack/repo"
)

// On OpenShift the APIServer object's tlsSecurityProfile says which TLS
// versions and ciphers the cluster's servers accept; memcached follows it.
// This API server serves OpenShift's APIServer API, from its CRD.
var _ = Describe("the cluster's TLS security profile", Ordered, func() {
	apiServer := &configv1.APIServer{ObjectMeta: metav1.ObjectMeta{Name: "cluster"}}

	BeforeAll(func() {
		crd, err := repo.OpenShiftAPIServerCRD()
		Expect(err).NotTo(HaveOccurred())
		_, err = envtest.InstallCRDs(cluster.RestConfig(), envtest.CRDInstallOptions{ErrorIfPathMissing: true, Paths: []string{crd}})
		Expect(err).NotTo(HaveOccurred())
		apiServer.Spec.TLSSecurityProfile = &configv1.TLSSecurityProfile{Type: configv1.TLSProfileModernType, Modern: &configv1.ModernTLSProfile{}}
		Expect(k8s.Create(ctx, apiServer)).To(Succeed())
		DeferCleanup(func() { Expect(k8s.Delete(ctx, apiServer)).To(Succeed()) })

		opts := suiteOptions()
		opts.ClusterTLSProfile = true
		runOperator(opts)
	})

	// memcachedOptions is memcached's -o option of mc's Deployment that
	// holds its TLS settings.
	memcachedOptions := func(g Gomega, mc *cachev1.Memcached) string {
		for _, arg := range objectOf(g, mc, &appsv1.Deployment{}).Spec.Template.Spec.Containers[0].Command {
			if strings.HasPrefix(arg, "--extended=ssl_") {
				return arg
			}
		}
		return ""
	}

	It("follows Modern, and a change to Old reaches every Memcached; a spec's own minimum wins, its ciphers follow", func() {
		following := gen.Memcached(watchedNS, "tls-follows", gen.WithSize(1), gen.WithTLS("cache-tls"))
		own := gen.Memcached(watchedNS, "tls-own-minimum", gen.WithSize(1), gen.WithTLS("cache-tls"))
		own.Spec.TLS.MinVersion = "VersionTLS12"
		create(following)
		create(own)
		Eventually(func(g Gomega) {
			// Modern is TLS 1.3 only: no OpenSSL cipher list.
			g.Expect(memcachedOptions(g, following)).To(HaveSuffix(",ssl_min_version=3"))
			g.Expect(memcachedOptions(g, own)).To(HaveSuffix(",ssl_min_version=2"))
		}).Should(Succeed())
		// Settled, nothing else wakes their reconciler: only the watch of
		// the APIServer can bring the change below.
		eventuallyAvailable(following, 1)
		eventuallyAvailable(own, 1)

		By("changing the cluster's profile to Old")
		patch := client.MergeFrom(apiServer.DeepCopy())
		apiServer.Spec.TLSSecurityProfile = &configv1.TLSSecurityProfile{Type: configv1.TLSProfileOldType, Old: &configv1.OldTLSProfile{}}
		Expect(k8s.Patch(ctx, apiServer, patch)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(memcachedOptions(g, following)).To(ContainSubstring(",ssl_min_version=0,ssl_ciphers=ECDHE-ECDSA-AES128-GCM-SHA256:"))
			g.Expect(memcachedOptions(g, own)).To(ContainSubstring(",ssl_min_version=2,ssl_ciphers=ECDHE-ECDSA-AES128-GCM-SHA256:"))
		}).Should(Succeed())
	})
})
