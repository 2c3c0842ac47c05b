package olm

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	operatorsv1 "github.com/operator-framework/api/pkg/operators/v1"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilversion "k8s.io/apimachinery/pkg/util/version"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
	"github.com/example-inc/memcached-operator/certs"
	"github.com/example-inc/memcached-operator/test/framework/gen"
	"github.com/example-inc/memcached-operator/test/framework/harness"
	"github.com/example-inc/memcached-operator/test/framework/operatorproc"
	"github.com/example-inc/memcached-operator/test/framework/process"
	"github.com/example-inc/memcached-operator/test/framework/repo"
	"github.com/example-inc/memcached-operator/test/framework/webhookroute"
	"github.com/example-inc/memcached-operator/webhooks"
)

// What the bundle and the catalog name (bundle/ and make catalog).
const (
	packageName    = "memcached-operator"
	channelName    = "alpha"
	deploymentName = "memcached-operator-controller-manager"
	// webhookService is the Service OLM makes for the webhooks:
	// <deploymentName>-service, with its certificate in <service>-cert.
	webhookService = deploymentName + "-service"
	// olmCAKey is the key of OLM's certificate Secret that holds its CA.
	olmCAKey = "olmCAKey"
	// memcachedNamespace holds the suite's Memcached objects.
	memcachedNamespace = "cache-users"
	// denied is how the API server reports the validating webhook's refusal.
	denied = `admission webhook "vmemcached-v1.kb.io" denied the request`
)

var _ = Describe("OLM Subscription on a cluster with an egress proxy", Ordered, func() {
	var (
		bundleDir = filepath.Join(repo.Root(), "bundle")
		// fromVersion is the committed bundle's; toVersion the upgrade's.
		fromVersion, toVersion string
		catalogAddr            string
		// catalogServers are the opm serve processes, stopped after all.
		catalogServers []*process.Process

		operator *operatorproc.Operator
		route    *webhookroute.Route
		// cache is the Memcached made before the upgrade; its pods and its
		// Deployment's generation must survive it.
		cache           *cachev1.Memcached
		cachePods       map[string]types.UID
		cacheGeneration int64

		operatorLog = func() string { return filepath.Join(workDir, "operator.log") }
	)

	BeforeAll(func(ctx SpecContext) {
		var err error
		fromVersion, err = bundleVersion(bundleDir)
		Expect(err).NotTo(HaveOccurred())
		v := utilversion.MustParseSemantic(fromVersion)
		toVersion = fmt.Sprintf("%d.%d.%d", v.Major(), v.Minor(), v.Patch()+1)

		By("rendering bundle/ into a catalog with make catalog and serving it with opm serve")
		dir := filepath.Join(workDir, "catalog-v"+fromVersion)
		Expect(renderCatalog(ctx, paths.opm, dir, bundleDir)).To(Succeed())
		p, port, err := serveCatalog(paths.opm, dir, workDir, "opm-v"+fromVersion)
		Expect(err).NotTo(HaveOccurred())
		catalogServers = append(catalogServers, p)
		catalogAddr = catalogAddress(port)
	})

	AfterAll(func() {
		if harness.AnySpecFailed() && operator != nil {
			GinkgoWriter.Println(operator.Tail(40))
		}
		if operator != nil {
			Expect(operator.Stop(30 * time.Second)).To(Succeed())
		}
		for _, p := range catalogServers {
			Expect(p.Stop(30 * time.Second)).To(Succeed())
		}
	})

	It("installs the committed bundle: the InstallPlan completes and the CSV succeeds", func(ctx SpecContext) {
		Expect(k8s.Create(ctx, catalogSource(catalogAddr))).To(Succeed())
		start := time.Now()
		Eventually(func(g Gomega) {
			cs := &operatorsv1alpha1.CatalogSource{}
			g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: olmNamespace, Name: catalogSourceName}, cs)).To(Succeed())
			g.Expect(cs.Status.GRPCConnectionState).NotTo(BeNil())
			g.Expect(cs.Status.GRPCConnectionState.LastObservedState).To(Equal("READY"))
		}).WithContext(ctx).WithTimeout(time.Minute).Should(Succeed())
		GinkgoWriter.Printf("CatalogSource READY %s after create\n", time.Since(start).Round(time.Millisecond))

		// No targetNamespaces: AllNamespaces, the only install mode the CSV
		// supports.
		Expect(k8s.Create(ctx, &operatorsv1.OperatorGroup{
			ObjectMeta: metav1.ObjectMeta{Name: packageName, Namespace: operatorNamespace},
		})).To(Succeed())
		start = time.Now()
		Expect(k8s.Create(ctx, &operatorsv1alpha1.Subscription{
			ObjectMeta: metav1.ObjectMeta{Name: packageName, Namespace: operatorNamespace},
			Spec: &operatorsv1alpha1.SubscriptionSpec{
				CatalogSource: catalogSourceName, CatalogSourceNamespace: olmNamespace,
				Package: packageName, Channel: channelName, InstallPlanApproval: operatorsv1alpha1.ApprovalAutomatic,
			},
		})).To(Succeed())
		expectInstalled(ctx, fromVersion)
		GinkgoWriter.Printf("CSV %s Succeeded %s after the Subscription was created\n", csvName(fromVersion), time.Since(start).Round(time.Millisecond))
	}, SpecTimeout(5*time.Minute))

	It("puts the cluster proxy and the OperatorGroup's target namespaces into the manager Deployment", func(ctx SpecContext) {
		d := getDeployment(ctx)
		c, err := managerContainer(d)
		Expect(err).NotTo(HaveOccurred())

		By("OLM injected the Proxy status, upper case only, into the manager container")
		Expect(proxyVars(c.Env)).To(Equal(clusterProxyEnv()))

		By("WATCH_NAMESPACE reads the olm.targetNamespaces annotation, which OLM set from the OperatorGroup")
		og := &operatorsv1.OperatorGroup{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: operatorNamespace, Name: packageName}, og)).To(Succeed())
		Expect(og.Status.Namespaces).To(Equal([]string{metav1.NamespaceAll}), "AllNamespaces")
		Expect(d.Spec.Template.Annotations).To(HaveKeyWithValue("olm.operatorGroup", og.Name))
		Expect(d.Spec.Template.Annotations).To(HaveKeyWithValue("olm.targetNamespaces", strings.Join(og.Status.Namespaces, ",")))
		i := slices.IndexFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == "WATCH_NAMESPACE" })
		Expect(i).NotTo(BeNumerically("<", 0), "no WATCH_NAMESPACE")
		Expect(c.Env[i].ValueFrom).NotTo(BeNil())
		Expect(c.Env[i].ValueFrom.FieldRef).To(HaveField("FieldPath", "metadata.annotations['olm.targetNamespaces']"))
		env, err := containerEnv(d, c)
		Expect(err).NotTo(HaveOccurred())
		Expect(env).To(ContainElement("WATCH_NAMESPACE="), "every namespace")
	})

	It("makes the webhook configurations with OLM's CA and mounts OLM's certificate where the manager reads it, without cert-manager", func(ctx SpecContext) {
		csv := &operatorsv1alpha1.ClusterServiceVersion{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: operatorNamespace, Name: csvName(fromVersion)}, csv)).To(Succeed())
		secret := &corev1.Secret{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: operatorNamespace, Name: webhookService + "-cert"}, secret)).To(Succeed())
		Expect(secret.Type).To(Equal(corev1.SecretTypeTLS))
		Expect(secret.Data).To(HaveKey(olmCAKey))

		By("one webhook per webhookdefinition, calling OLM's Service with OLM's CA")
		hooks, err := csvWebhooks(ctx, csv.Name)
		Expect(err).NotTo(HaveOccurred())
		webhookPaths := map[string]string{}
		for _, w := range csv.Spec.WebhookDefinitions {
			webhookPaths[w.GenerateName] = *w.WebhookPath
		}
		configs := hooks.ClientConfigs()
		Expect(slices.Sorted(maps.Keys(configs))).To(Equal(slices.Sorted(maps.Keys(webhookPaths))))
		for name, cc := range configs {
			Expect(cc.Service).NotTo(BeNil(), name)
			Expect(cc.Service.Namespace).To(Equal(operatorNamespace), name)
			Expect(cc.Service.Name).To(Equal(webhookService), name)
			Expect(cc.Service.Path).To(HaveValue(Equal(webhookPaths[name])), name)
			Expect(cc.CABundle).To(Equal(secret.Data[olmCAKey]), name)
		}

		By("OLM's certificate is valid for <service>.<namespace>.svc under that CA")
		leaf, err := parseCertificatePEM(secret.Data[certs.CertFile])
		Expect(err).NotTo(HaveOccurred())
		ca, err := parseCertificatePEM(secret.Data[olmCAKey])
		Expect(err).NotTo(HaveOccurred())
		Expect(leaf.Verify(verifyOptions(ca, serviceDNSName()))).Error().NotTo(HaveOccurred())

		By("the Secret is mounted at the manager's default certificate directory, which its arguments do not change")
		d := getDeployment(ctx)
		c, err := managerContainer(d)
		Expect(err).NotTo(HaveOccurred())
		Expect(c.Args).NotTo(ContainElement(HavePrefix("--webhook-cert-dir")))
		Expect(c.Args).NotTo(ContainElement(HavePrefix("--webhook-cert-mode")), "the default mode is mounted")
		i := slices.IndexFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return m.MountPath == certs.DefaultMountedDir })
		Expect(i).NotTo(BeNumerically("<", 0), "nothing mounted at %s: %+v", certs.DefaultMountedDir, c.VolumeMounts)
		j := slices.IndexFunc(d.Spec.Template.Spec.Volumes, func(v corev1.Volume) bool { return v.Name == c.VolumeMounts[i].Name })
		Expect(j).NotTo(BeNumerically("<", 0))
		vol := d.Spec.Template.Spec.Volumes[j]
		Expect(vol.Secret).NotTo(BeNil())
		Expect(vol.Secret.SecretName).To(Equal(secret.Name))
		Expect(vol.Secret.Items).To(ConsistOf(
			corev1.KeyToPath{Key: "tls.crt", Path: certs.CertFile},
			corev1.KeyToPath{Key: "tls.key", Path: certs.KeyFile}))

		By("no cert-manager API exists on this cluster")
		var crds apiextensionsv1.CustomResourceDefinitionList
		Expect(k8s.List(ctx, &crds)).To(Succeed())
		Expect(crds.Items).NotTo(BeEmpty())
		for _, crd := range crds.Items {
			Expect(crd.Spec.Group).NotTo(HaveSuffix("cert-manager.io"))
		}
	})

	It("runs the operator as OLM's pod would: OLM's certificate, admission through the API server, the proxy in memcached pods, no credentials in its log", func(ctx SpecContext) {
		start := time.Now()
		var err error
		operator, err = startHostOperator(ctx, k8s, getDeployment(ctx), operatorBinary,
			filepath.Join(workDir, "operator-v"+fromVersion), operatorLog())
		Expect(err).NotTo(HaveOccurred())
		GinkgoWriter.Printf("operator ready %s after start\n", time.Since(start).Round(time.Millisecond))

		expectServesOLMCertificate(ctx, operator, csvName(fromVersion))

		By("stopping olm-operator, then routing the API server's webhook calls to the host")
		Expect(olmOps.stopOLM()).To(Succeed())
		route, err = routeToHost(ctx, csvName(fromVersion), operator.Ports().Webhook)
		Expect(err).NotTo(HaveOccurred())

		Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: memcachedNamespace}})).To(Succeed())
		expectTooBigRefused(ctx, "too-big")

		By("a Memcached without a size: defaulted by the mutating webhook, reconciled, its pods carry the proxy")
		cache = gen.Memcached(memcachedNamespace, "cache")
		Expect(k8s.Create(ctx, cache)).To(Succeed())
		size := webhooks.DefaultSizePolicy().Default
		Expect(cache.Spec.Size).To(HaveValue(Equal(size)))
		start = time.Now()
		cacheGeneration = expectReconciledWithProxy(ctx, cache, size).Generation
		GinkgoWriter.Printf("Memcached reconciled, %d pods ready with the proxy, %s after create\n", size, time.Since(start).Round(time.Millisecond))
		cachePods = memcachedPods(ctx, Default, cache)
		Expect(cachePods).To(HaveLen(int(size)))

		expectLogWithoutCredentials(operatorLog())
	}, SpecTimeout(5*time.Minute))

	It("upgrades to the next version from the catalog; the Memcached keeps its pods", func(ctx SpecContext) {
		Expect(cachePods).NotTo(BeEmpty(), "needs the previous spec")

		By("stopping the host operator, as OLM replaces the old pod, and giving OLM its Service and webhooks back")
		Expect(operator.Stop(30 * time.Second)).To(Succeed())
		Expect(route.Restore(ctx, k8s)).To(Succeed())
		Expect(olmOps.startOLM()).To(Succeed())

		By(fmt.Sprintf("serving a catalog with %s and %s, which replaces it", fromVersion, toVersion))
		nextDir := filepath.Join(workDir, "bundle-v"+toVersion)
		Expect(nextBundle(bundleDir, nextDir, toVersion)).To(Equal(fromVersion))
		dir := filepath.Join(workDir, "catalog-v"+toVersion)
		Expect(renderCatalog(ctx, paths.opm, dir, bundleDir, nextDir)).To(Succeed())
		p, port, err := serveCatalog(paths.opm, dir, workDir, "opm-v"+toVersion)
		Expect(err).NotTo(HaveOccurred())
		catalogServers = append(catalogServers, p)

		// A grpc CatalogSource with an address has no pod to restart and no
		// image to poll: the catalog operator reconnects when the address
		// changes, and a connection that becomes READY invalidates its cache
		// and resolves the Subscriptions again.
		By("pointing the CatalogSource at it")
		start := time.Now()
		cs := &operatorsv1alpha1.CatalogSource{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: olmNamespace, Name: catalogSourceName}, cs)).To(Succeed())
		before := cs.DeepCopy()
		cs.Spec.Address = catalogAddress(port)
		Expect(k8s.Patch(ctx, cs, client.MergeFrom(before))).To(Succeed())

		csv := expectInstalled(ctx, toVersion)
		Expect(csv.Spec.Replaces).To(Equal(csvName(fromVersion)))
		Eventually(func(g Gomega) {
			err := k8s.Get(ctx, client.ObjectKey{Namespace: operatorNamespace, Name: csvName(fromVersion)}, &operatorsv1alpha1.ClusterServiceVersion{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "old CSV still there (err %v)", err)
			old, err := csvWebhooks(ctx, csvName(fromVersion))
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(old.ClientConfigs()).To(BeEmpty(), "old webhook configurations")
		}).WithContext(ctx).WithTimeout(2 * time.Minute).Should(Succeed())
		GinkgoWriter.Printf("upgraded to CSV %s (Succeeded, %s removed) %s after the catalog changed\n",
			csv.Name, csvName(fromVersion), time.Since(start).Round(time.Millisecond))

		By("OLM rolled the manager Deployment to the new version, the proxy still injected")
		d := getDeployment(ctx)
		c, err := managerContainer(d)
		Expect(err).NotTo(HaveOccurred())
		Expect(c.Image).To(HaveSuffix(":v" + toVersion))
		Expect(proxyVars(c.Env)).To(Equal(clusterProxyEnv()))

		By("the Memcached kept its Deployment and its pods")
		Expect(memcachedPods(ctx, Default, cache)).To(Equal(cachePods))
		md := &appsv1.Deployment{}
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(cache), md)).To(Succeed())
		Expect(md.Generation).To(Equal(cacheGeneration))
	}, SpecTimeout(6*time.Minute))

	It("runs the upgraded operator as its new pod would: it leaves the existing pods alone and serves the webhooks", func(ctx SpecContext) {
		Expect(toVersion).NotTo(BeEmpty())
		var err error
		operator, err = startHostOperator(ctx, k8s, getDeployment(ctx), operatorBinary,
			filepath.Join(workDir, "operator-v"+toVersion), operatorLog())
		Expect(err).NotTo(HaveOccurred())
		expectServesOLMCertificate(ctx, operator, csvName(toVersion))

		By("stopping olm-operator, then routing the API server's webhook calls to the host")
		Expect(olmOps.stopOLM()).To(Succeed())
		route, err = routeToHost(ctx, csvName(toVersion), operator.Ports().Webhook)
		Expect(err).NotTo(HaveOccurred())
		expectTooBigRefused(ctx, "too-big-after-upgrade")

		// Created after the operator started, so by the time it is
		// reconciled the start-up pass over the existing Memcached, which
		// the informer's first list queues, has run too.
		next := gen.Memcached(memcachedNamespace, "cache-after-upgrade", gen.WithSize(2))
		Expect(k8s.Create(ctx, next)).To(Succeed())
		expectReconciledWithProxy(ctx, next, 2)

		By("the first Memcached still has the same pods and Deployment generation")
		expectReconciledWithProxy(ctx, cache, webhooks.DefaultSizePolicy().Default)
		Expect(memcachedPods(ctx, Default, cache)).To(Equal(cachePods))
		md := &appsv1.Deployment{}
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(cache), md)).To(Succeed())
		Expect(md.Generation).To(Equal(cacheGeneration))

		expectLogWithoutCredentials(operatorLog())
	}, SpecTimeout(5*time.Minute))
})

// expectInstalled waits until the Subscription has installed version: its
// InstallPlan Complete and the CSV Succeeded. It returns the CSV.
func expectInstalled(ctx context.Context, version string) *operatorsv1alpha1.ClusterServiceVersion {
	GinkgoHelper()
	csv := &operatorsv1alpha1.ClusterServiceVersion{}
	Eventually(func(g Gomega) {
		g.Expect(olmOps.olm.Running()).To(BeTrue(), "olm exited:\n%s", olmOps.olm.Tail(20))
		g.Expect(olmOps.catalog.Running()).To(BeTrue(), "catalog exited:\n%s", olmOps.catalog.Tail(20))
		sub := &operatorsv1alpha1.Subscription{}
		g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: operatorNamespace, Name: packageName}, sub)).To(Succeed())
		g.Expect(sub.Status.InstalledCSV).To(Equal(csvName(version)), "Subscription state %q, conditions %+v", sub.Status.State, sub.Status.Conditions)
		g.Expect(sub.Status.InstallPlanRef).NotTo(BeNil())
		ip := &operatorsv1alpha1.InstallPlan{}
		g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: operatorNamespace, Name: sub.Status.InstallPlanRef.Name}, ip)).To(Succeed())
		g.Expect(ip.Spec.ClusterServiceVersionNames).To(ContainElement(csvName(version)))
		g.Expect(ip.Status.Phase).To(Equal(operatorsv1alpha1.InstallPlanPhaseComplete))
		g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: operatorNamespace, Name: csvName(version)}, csv)).To(Succeed())
		g.Expect(csv.Status.Phase).To(Equal(operatorsv1alpha1.CSVPhaseSucceeded), "CSV %s: %s", csv.Status.Reason, csv.Status.Message)
	}).WithContext(ctx).WithTimeout(4 * time.Minute).WithPolling(250 * time.Millisecond).Should(Succeed())
	return csv
}

func getDeployment(ctx context.Context) *appsv1.Deployment {
	GinkgoHelper()
	d := &appsv1.Deployment{}
	Expect(k8s.Get(ctx, client.ObjectKey{Namespace: operatorNamespace, Name: deploymentName}, d)).To(Succeed())
	return d
}

// serviceDNSName is the name the API server checks the webhook's
// certificate for.
func serviceDNSName() string { return webhookService + "." + operatorNamespace + ".svc" }

// expectServesOLMCertificate checks that the operator's webhook server
// presents the certificate of OLM's Secret, and that it verifies for
// serviceDNSName against the caBundle of every webhook of csv.
func expectServesOLMCertificate(ctx context.Context, op *operatorproc.Operator, csv string) {
	GinkgoHelper()
	By("the webhook server presents OLM's certificate, valid for <service>.<namespace>.svc under the webhooks' caBundle")
	secret := &corev1.Secret{}
	Expect(k8s.Get(ctx, client.ObjectKey{Namespace: operatorNamespace, Name: webhookService + "-cert"}, secret)).To(Succeed())
	leaf, err := parseCertificatePEM(secret.Data[certs.CertFile])
	Expect(err).NotTo(HaveOccurred())
	hooks, err := csvWebhooks(ctx, csv)
	Expect(err).NotTo(HaveOccurred())
	Expect(hooks.ClientConfigs()).NotTo(BeEmpty())
	for name, cc := range hooks.ClientConfigs() {
		served, err := servedCertificate(ctx, op.Ports().Webhook, serviceDNSName(), cc.CABundle)
		Expect(err).NotTo(HaveOccurred(), "webhook %s", name)
		Expect(served.Raw).To(Equal(leaf.Raw), "webhook %s", name)
	}
}

// expectTooBigRefused creates a Memcached one above the size policy's
// maximum and expects the API server to refuse it through the validating
// webhook. (Size 0 would never reach the webhook: the CRD's minimum of 1
// refuses it first.) The first calls may fail otherwise while the API
// server picks up the routed Service.
func expectTooBigRefused(ctx context.Context, name string) {
	GinkgoHelper()
	By("a Memcached above the maximum size is refused by the API server through the validating webhook")
	start := time.Now()
	Eventually(func() error {
		return k8s.Create(ctx, gen.Memcached(memcachedNamespace, name, gen.WithSize(webhooks.DefaultSizePolicy().Max+1)))
	}).WithContext(ctx).WithTimeout(time.Minute).WithPolling(200 * time.Millisecond).Should(MatchError(ContainSubstring(denied)))
	GinkgoWriter.Printf("refused through the webhook %s after routing\n", time.Since(start).Round(time.Millisecond))
}

// expectLogWithoutCredentials checks the operator logged the proxy URLs it
// propagates, with the credentials redacted, and the password nowhere.
func expectLogWithoutCredentials(path string) {
	GinkgoHelper()
	By("the operator's log names the proxy without its credentials")
	log, err := os.ReadFile(path)
	Expect(err).NotTo(HaveOccurred())
	Expect(string(log)).To(ContainSubstring("REDACTED@proxy.example.com"))
	Expect(string(log)).NotTo(ContainSubstring(proxyPassword))
}
