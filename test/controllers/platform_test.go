package controllers_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/example-inc/memcached-operator/controllers"
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
		// OpenShift serves SecurityContextConstraints in that group; a CRD of
		// the same group makes the real API server advertise it the same way.
		scc := &apiextensionsv1.CustomResourceDefinition{
			ObjectMeta: metav1.ObjectMeta{Name: "securitycontextconstraints.security.openshift.io"},
			Spec: apiextensionsv1.CustomResourceDefinitionSpec{
				Group: "security.openshift.io",
				Names: apiextensionsv1.CustomResourceDefinitionNames{
					Plural: "securitycontextconstraints", Kind: "SecurityContextConstraints",
				},
				Scope: apiextensionsv1.ClusterScoped,
				Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
					Name: "v1", Served: true, Storage: true,
					Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
						Type: "object", XPreserveUnknownFields: ptr.To(true),
					}},
				}},
			},
		}
		crds := envtest.CRDInstallOptions{CRDs: []*apiextensionsv1.CustomResourceDefinition{scc}}
		_, err := envtest.InstallCRDs(cluster.RestConfig(), crds)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { Expect(envtest.UninstallCRDs(cluster.RestConfig(), crds)).To(Succeed()) })
		Eventually(detect).Should(Equal(controllers.PlatformOpenShift))
	})
})
