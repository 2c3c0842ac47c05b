package e2e

import (
	"slices"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

var (
	// paths are the OLM binaries, CRDs and opm.
	paths tools
	// olmOps are OLM's olm and catalog operators.
	olmOps *olmOperators
)

// OLM's olm and catalog operators run against the suite's cluster, with an
// OpenShift cluster Proxy, for the OLM specs alone: what the installs leave
// (namespaces, the webhook configurations and cluster roles OLM made) goes
// when they end, so that nothing OLM deployed answers for or collides with
// the specs after them.
var _ = Describe("OLM", Ordered, Label(labelHost, labelOLM), func() {
	BeforeAll(func(ctx SpecContext) {
		var missing []string
		paths, missing = toolsFromEnv()
		Expect(missing).To(BeEmpty(), "run make test-e2e, which builds and names them")

		namespaces := names(ctx, &corev1.NamespaceList{})
		// The cluster-scoped kinds OLM makes for an install: its
		// webhooks, the bundle's ClusterRoles and the permissions it
		// lifts to ClusterRoles.
		clusterScoped := []client.ObjectList{
			&admissionregistrationv1.MutatingWebhookConfigurationList{},
			&admissionregistrationv1.ValidatingWebhookConfigurationList{},
			&rbacv1.ClusterRoleList{},
			&rbacv1.ClusterRoleBindingList{},
		}
		before := make([][]string, len(clusterScoped))
		for i, list := range clusterScoped {
			before[i] = names(ctx, list)
		}

		// olm looks for the Proxy API only when it starts, so the Proxy CRD
		// and the cluster Proxy come first.
		start := time.Now()
		crds, err := readCRDs(paths.olmCRDs, paths.proxyCRD)
		Expect(err).NotTo(HaveOccurred())
		createCRDs(ctx, k8s, crds)
		createClusterProxy(ctx, k8s)
		Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: olmNamespace}})).To(Succeed())

		olmOps = &olmOperators{tools: paths, cluster: cluster.local, dir: workDir}
		Expect(olmOps.startOLM()).To(Succeed())
		Expect(olmOps.startCatalog()).To(Succeed())
		DeferCleanup(olmOps.stopAll)
		// Registered after OLM starts, so it runs while OLM still does,
		// which removes what its objects hold (finalizers, webhooks).
		DeferCleanup(func(ctx SpecContext) {
			deleteNamespaces(ctx, newNames(names(ctx, &corev1.NamespaceList{}), namespaces)...)
			for i, list := range clusterScoped {
				deleteNew(ctx, before[i], list)
			}
		}, NodeTimeout(5*time.Minute))
		GinkgoWriter.Printf("%d CRDs, cluster Proxy and OLM up in %s\n", len(crds), time.Since(start).Round(time.Millisecond))
	}, NodeTimeout(5*time.Minute))

	olmInstallSpecs()
	disconnectedInstallSpecs()
})

// names are the names of the objects of list's kind.
func names(ctx SpecContext, list client.ObjectList) []string {
	GinkgoHelper()
	var out []string
	for _, o := range listed(ctx, list) {
		out = append(out, o.GetName())
	}
	return out
}

// listed lists the objects of list's kind.
func listed(ctx SpecContext, list client.ObjectList) []client.Object {
	GinkgoHelper()
	Expect(k8s.List(ctx, list)).To(Succeed())
	items, err := apimeta.ExtractList(list)
	Expect(err).NotTo(HaveOccurred())
	out := make([]client.Object, 0, len(items))
	for _, o := range items {
		out = append(out, o.(client.Object))
	}
	return out
}

// newNames are the names of now that before does not hold.
func newNames(now, before []string) []string {
	var out []string
	for _, n := range now {
		if !slices.Contains(before, n) {
			out = append(out, n)
		}
	}
	return out
}

// deleteNew deletes the objects of list's kind that are not in before.
func deleteNew(ctx SpecContext, before []string, list client.ObjectList) {
	GinkgoHelper()
	for _, o := range listed(ctx, list) {
		if !slices.Contains(before, o.GetName()) {
			Expect(client.IgnoreNotFound(k8s.Delete(ctx, o))).To(Succeed())
		}
	}
}
