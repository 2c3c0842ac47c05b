package controllers_test

import (
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/example-inc/memcached-operator/controllers"
	"github.com/example-inc/memcached-operator/hack/repo"
)

var _ = Describe("Platform detection", Ordered, func() {
	detect := func() (controllers.Platform, error) {
		dc, err := discovery.NewDiscoveryClientForConfig(cluster.RestConfig())
		Expect(err).NotTo(HaveOccurred())
		return controllers.DetectPlatform(dc)
	}

	It("finds plain Kubernetes when security.openshift.io is not served", func() {
		Expect(detect()).To(Equal(controllers.PlatformKubernetes))
	})

	It("finds OpenShift once the API server serves security.openshift.io", func() {
		// OpenShift serves SecurityContextConstraints in that group; its CRD,
		// from openshift/api, makes the real API server advertise it the same
		// way.
		dir, err := repo.ModuleDir("github.com/openshift/api")
		Expect(err).NotTo(HaveOccurred())
		crds := envtest.CRDInstallOptions{ErrorIfPathMissing: true, Paths: []string{filepath.Join(dir, "security", "v1",
			"zz_generated.crd-manifests", "0000_03_config-operator_01_securitycontextconstraints.crd.yaml")}}
		_, err = envtest.InstallCRDs(cluster.RestConfig(), crds)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { Expect(envtest.UninstallCRDs(cluster.RestConfig(), crds)).To(Succeed()) })
		Eventually(detect).Should(Equal(controllers.PlatformOpenShift))
	})
})
