package e2e

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	cmapi "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
	"github.com/example-inc/memcached-operator/api/v1/gen"
	"github.com/example-inc/memcached-operator/certs"
	"github.com/example-inc/memcached-operator/hack/local-cluster/process"
	"github.com/example-inc/memcached-operator/test/framework/manifest"
	"github.com/example-inc/memcached-operator/webhooks"
)

// The AllNamespaces install: the operator's namespace is the CSV's
// suggested one (operatorNamespace, as config/default's), and its Memcached
// objects live in memcachedNamespace.
const memcachedNamespace = "cache-users"

// olmInstallSpecs are the OLM container's installs (olm_test.go). One
// ordered container, because OLM refuses an AllNamespaces install beside
// any other: the AllNamespaces install and its upgrade first, then, once it
// is removed, the namespaced installs side by side.
func olmInstallSpecs() {
	Describe("OLM installs on a cluster with an egress proxy and a real node", Ordered, func() {
		// catalogServers are the opm serve processes, stopped after all.
		var catalogServers []*process.Process

		BeforeAll(func(ctx SpecContext) {
			By("rendering bundle/ into a catalog with make catalog and serving it with opm serve")
			p, address := serveCatalog(ctx, "v"+fromVersion, manifest.BundleDir)
			catalogServers = append(catalogServers, p)
			createCatalogSource(ctx, catalogSourceName, address)
		}, NodeTimeout(3*time.Minute))

		AfterAll(func() {
			for _, p := range catalogServers {
				Expect(p.Stop(30 * time.Second)).To(Succeed())
			}
		})

		Context("AllNamespaces, upgraded under continuous writes", func() {
			all := install{namespace: operatorNamespace}
			var (
				// cache is the Memcached made before the upgrade; its pods and
				// its Deployment's generation must survive it.
				cache           *cachev1.Memcached
				cachePods       map[string]types.UID
				cacheGeneration int64
			)

			It("installs the committed bundle: the InstallPlan completes and the CSV succeeds", func(ctx SpecContext) {
				start := time.Now()
				all.subscribe(ctx)
				all.expectInstalled(ctx, fromVersion)
				GinkgoWriter.Printf("CSV %s Succeeded %s after the Subscription was created\n", csvName(fromVersion), time.Since(start).Round(time.Millisecond))
			}, SpecTimeout(5*time.Minute))

			It("puts the cluster proxy and the OperatorGroup's target namespaces into the manager's environment", func(ctx SpecContext) {
				d := all.deployment(ctx)
				c, err := manifest.ManagerIn(d.Spec.Template.Spec.Containers)
				Expect(err).NotTo(HaveOccurred())

				By("OLM injected the Proxy status, upper case only, into the manager container")
				Expect(proxyVars(c.Env)).To(Equal(clusterProxyEnv()))

				By("WATCH_NAMESPACE reads the olm.targetNamespaces annotation, which OLM set from the OperatorGroup")
				og := all.operatorGroup(ctx)
				Expect(og.Status.Namespaces).To(ConsistOf(all.watched()), "AllNamespaces")
				Expect(d.Spec.Template.Annotations).To(HaveKeyWithValue("olm.operatorGroup", og.Name))
				Expect(d.Spec.Template.Annotations).To(HaveKeyWithValue("olm.targetNamespaces", strings.Join(og.Status.Namespaces, ",")))
				i := slices.IndexFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == "WATCH_NAMESPACE" })
				Expect(i).NotTo(BeNumerically("<", 0), "no WATCH_NAMESPACE")
				Expect(c.Env[i].ValueFrom).NotTo(BeNil())
				Expect(c.Env[i].ValueFrom.FieldRef).To(HaveField("FieldPath", "metadata.annotations['olm.targetNamespaces']"))

				By("the manager process on the real node has them, as kubelet resolved them")
				env := processEnv(ctx, all.operatorPod(ctx, fromImage))
				Expect(env).To(HaveKeyWithValue("WATCH_NAMESPACE", ""), "every namespace")
				for k, v := range clusterProxyEnv() {
					Expect(env).To(HaveKeyWithValue(k, v))
				}
				Expect(env).To(HaveKeyWithValue("RELATED_IMAGE_MEMCACHED", subscriptionConfig().Env[0].Value), "the Subscription's env wins over the CSV's")
			})

			It("makes the webhook configurations with OLM's CA and mounts OLM's certificate where the manager reads it, without cert-manager", func(ctx SpecContext) {
				secret := &corev1.Secret{}
				Expect(k8s.Get(ctx, client.ObjectKey{Namespace: operatorNamespace, Name: webhookService + "-cert"}, secret)).To(Succeed())
				Expect(secret.Type).To(Equal(corev1.SecretTypeTLS))
				Expect(secret.Data).To(HaveKey(olmCAKey))

				By("one webhook per webhookdefinition, calling OLM's Service with OLM's CA")
				csv := &operatorsv1alpha1.ClusterServiceVersion{}
				Expect(k8s.Get(ctx, client.ObjectKey{Namespace: operatorNamespace, Name: csvName(fromVersion)}, csv)).To(Succeed())
				hooks, err := csvWebhooks(ctx, all, fromVersion)
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
				Expect(leaf.Verify(verifyOptions(ca, serviceDNSName(operatorNamespace)))).Error().NotTo(HaveOccurred())

				By("the Secret is mounted at the manager's default certificate directory, which its arguments do not change")
				d := all.deployment(ctx)
				c, err := manifest.ManagerIn(d.Spec.Template.Spec.Containers)
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

				By("cert-manager, which runs on this cluster for other specs, has no part in it")
				var certificates cmapi.CertificateList
				Expect(k8s.List(ctx, &certificates, client.InNamespace(operatorNamespace))).To(Succeed())
				Expect(certificates.Items).To(BeEmpty(), "no Certificate in the install's namespace")
				for _, c := range hooks.Mutating {
					Expect(c.Annotations).NotTo(HaveKey(HavePrefix("cert-manager.io/")), c.Name)
				}
				for _, c := range hooks.Validating {
					Expect(c.Annotations).NotTo(HaveKey(HavePrefix("cert-manager.io/")), c.Name)
				}
			})

			It("runs the operator pod on the real node: OLM's certificate served, admission through its Service, the proxy in memcached pods, no credentials in its log", func(ctx SpecContext) {
				pod := all.operatorPod(ctx, fromImage)
				expectServesOLMCertificate(ctx, all, fromVersion, pod)

				Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: memcachedNamespace}})).To(Succeed())
				expectTooBigRefused(ctx, memcachedNamespace, "too-big")

				By("a Memcached without a size: defaulted by the mutating webhook, reconciled, its pods serving with the proxy")
				cache = gen.Memcached(memcachedNamespace, "cache")
				Expect(k8s.Create(ctx, cache)).To(Succeed())
				size := webhooks.DefaultSizePolicy().Default
				Expect(cache.Spec.Size).To(HaveValue(Equal(size)))
				start := time.Now()
				cacheGeneration = expectReconciledWithProxy(ctx, cache, size).Generation
				GinkgoWriter.Printf("Memcached reconciled, %d pods ready with the proxy, %s after create\n", size, time.Since(start).Round(time.Millisecond))
				cachePods = memcachedPodUIDs(ctx, Default, cache)
				Expect(cachePods).To(HaveLen(int(size)))

				expectLogWithoutCredentials(operatorLog(ctx, pod))
				expectSecretKept(ctx, all)
			}, SpecTimeout(5*time.Minute))

			It("holds the manager's rules in every namespace, as OLM lifts them to ClusterRoles for AllNamespaces, and the leader election's and OLM-only ones in its own alone", func(ctx SpecContext) {
				sa := all.serviceAccount()
				for _, ns := range []string{memcachedNamespace, "default", metav1.NamespaceAll} {
					for _, a := range managerAccess {
						Expect(can(ctx, sa, a, ns)).To(BeTrue(), "%s in namespace %q", a, ns)
					}
				}
				expectOwnNamespaceRulesThereOnly(ctx, all, []string{memcachedNamespace, "default"})
			})

			It("installs the bundle's NetworkPolicies in its own namespace alone, for the manager pod's webhook and metrics ports", func(ctx SpecContext) {
				expectNetworkPolicies(ctx, all.String(), all.operatorPod(ctx, fromImage), []string{memcachedNamespace, "default"})
			})

			It("serves metrics with the certificate OpenShift's service CA writes for the metrics Service, once it exists, without a restart", func(ctx SpecContext) {
				expectMetricsCertificateFromServiceCA(ctx, all, all.operatorPod(ctx, fromImage))
			}, SpecTimeout(4*time.Minute))

			It("upgrades to the next version from the catalog while admission keeps answering; the Memcached keeps its pods", func(ctx SpecContext) {
				Expect(cachePods).NotTo(BeEmpty(), "needs the previous spec")
				oldPod := all.operatorPod(ctx, fromImage)
				oldSecret := expectSecretKept(ctx, all)

				By(fmt.Sprintf("serving a catalog with %s and %s, which replaces it", fromVersion, toVersion))
				nextDir := filepath.Join(workDir, "bundle-v"+toVersion)
				Expect(nextBundle(manifest.BundleDir, nextDir, toVersion)).To(Equal(fromVersion))
				p, address := serveCatalog(ctx, "v"+toVersion, manifest.BundleDir, nextDir)
				catalogServers = append(catalogServers, p)

				By("writing through admission without pause: dry-run creates the webhooks must admit and ones they must refuse")
				probe := startAdmissionProbe(ctx, probeOptions{
					Client: k8s,
					Good: func(i int) client.Object {
						return gen.Memcached(memcachedNamespace, "probe-"+strconv.Itoa(i))
					},
					Bad: func(i int) client.Object {
						return gen.Memcached(memcachedNamespace, "probe-bad-"+strconv.Itoa(i), gen.WithSize(subscriptionMaxSize+1))
					},
					Refused: func(err error) bool { return strings.Contains(err.Error(), denied) },
				})

				// A grpc CatalogSource with an address has no pod to restart and
				// no image to poll: the catalog operator reconnects when the
				// address changes, and a connection that becomes READY
				// invalidates its cache and resolves the Subscriptions again.
				By("pointing the CatalogSource at it")
				start := time.Now()
				catalog := &operatorsv1alpha1.CatalogSource{}
				Expect(k8s.Get(ctx, client.ObjectKey{Namespace: olmNamespace, Name: catalogSourceName}, catalog)).To(Succeed())
				before := catalog.DeepCopy()
				catalog.Spec.Address = address
				Expect(k8s.Patch(ctx, catalog, client.MergeFrom(before))).To(Succeed())

				csv := all.expectInstalled(ctx, toVersion)
				Expect(csv.Spec.Replaces).To(Equal(csvName(fromVersion)))
				Expect(csv.Annotations).To(HaveKeyWithValue("olm.skipRange", skipRange(toVersion)))
				Eventually(func(g Gomega) {
					err := k8s.Get(ctx, client.ObjectKey{Namespace: operatorNamespace, Name: csvName(fromVersion)}, &operatorsv1alpha1.ClusterServiceVersion{})
					g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "old CSV still there (err %v)", err)
					old, err := csvWebhooks(ctx, all, fromVersion)
					g.Expect(err).NotTo(HaveOccurred())
					g.Expect(old.ClientConfigs()).To(BeEmpty(), "old webhook configurations")
					err = k8s.Get(ctx, client.ObjectKeyFromObject(oldPod), &corev1.Pod{})
					g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "old manager pod still there (err %v)", err)
				}).WithContext(ctx).WithTimeout(2 * time.Minute).Should(Succeed())
				newPod := all.operatorPod(ctx, toImage)
				GinkgoWriter.Printf("upgraded to CSV %s (Succeeded, %s and its pod removed) %s after the catalog changed\n",
					csv.Name, csvName(fromVersion), time.Since(start).Round(time.Millisecond))

				By("admission answered every write by its content throughout")
				report := probe.Stop()
				AddReportEntry("admission during the upgrade", report.String())
				GinkgoWriter.Println("admission during the upgrade:", report)
				Expect(report.Requests).To(BeNumerically(">", 100), "the probe ran through the upgrade")
				Expect(report.Failures).To(BeEmpty(), report.String())

				By("OLM kept its certificate Secret, and so its CA, for the new CSV")
				secret := expectSecretKept(ctx, all)
				Expect(secret.UID).To(Equal(oldSecret.UID))
				Expect(secret.Data[olmCAKey]).To(Equal(oldSecret.Data[olmCAKey]))

				By("OLM rolled the manager Deployment to the new version, the proxy still injected")
				d := all.deployment(ctx)
				c, err := manifest.ManagerIn(d.Spec.Template.Spec.Containers)
				Expect(err).NotTo(HaveOccurred())
				Expect(c.Image).To(Equal(toImage))
				Expect(proxyVars(c.Env)).To(Equal(clusterProxyEnv()))
				Expect(newPod.Name).NotTo(Equal(oldPod.Name))

				By("the Memcached kept its Deployment and its pods")
				Expect(memcachedPodUIDs(ctx, Default, cache)).To(Equal(cachePods))
				md := &appsv1.Deployment{}
				Expect(k8s.Get(ctx, client.ObjectKeyFromObject(cache), md)).To(Succeed())
				Expect(md.Generation).To(Equal(cacheGeneration))
			}, SpecTimeout(6*time.Minute))

			It("runs the upgraded operator: it leaves the existing pods alone and serves the webhooks", func(ctx SpecContext) {
				pod := all.operatorPod(ctx, toImage)
				expectServesOLMCertificate(ctx, all, toVersion, pod)
				expectTooBigRefused(ctx, memcachedNamespace, "too-big-after-upgrade")

				// Created after the operator started, so by the time it is
				// reconciled the start-up pass over the existing Memcached, which
				// the informer's first list queues, has run too.
				next := gen.Memcached(memcachedNamespace, "cache-after-upgrade", gen.WithSize(2))
				Expect(k8s.Create(ctx, next)).To(Succeed())
				expectReconciledWithProxy(ctx, next, 2)

				By("the first Memcached still has the same pods and Deployment generation")
				expectReconciledWithProxy(ctx, cache, webhooks.DefaultSizePolicy().Default)
				Expect(memcachedPodUIDs(ctx, Default, cache)).To(Equal(cachePods))
				md := &appsv1.Deployment{}
				Expect(k8s.Get(ctx, client.ObjectKeyFromObject(cache), md)).To(Succeed())
				Expect(md.Generation).To(Equal(cacheGeneration))

				expectLogWithoutCredentials(operatorLog(ctx, pod))
			}, SpecTimeout(5*time.Minute))

			It("is removed with its namespaces, which makes room for namespaced installs", func(ctx SpecContext) {
				deleteNamespaces(ctx, operatorNamespace, memcachedNamespace)
			}, SpecTimeout(4*time.Minute))
		})

		Context("namespaced installs side by side: OwnNamespace twice, SingleNamespace, MultiNamespace", namespacedInstalls)
	})
}

// serviceDNSName is the name the API server checks the webhook's
// certificate for, for the webhook Service in namespace.
func serviceDNSName(namespace string) string { return webhookService + "." + namespace + ".svc" }

// expectServesOLMCertificate checks that the operator pod's webhook server
// presents the certificate of OLM's Secret, and that it verifies for the
// Service's name against the caBundle of every webhook of the install's CSV
// of version.
func expectServesOLMCertificate(ctx context.Context, in install, version string, pod *corev1.Pod) {
	GinkgoHelper()
	By("the webhook server presents OLM's certificate, valid for <service>.<namespace>.svc under the webhooks' caBundle")
	secret := &corev1.Secret{}
	Expect(k8s.Get(ctx, client.ObjectKey{Namespace: in.namespace, Name: webhookService + "-cert"}, secret)).To(Succeed())
	leaf, err := parseCertificatePEM(secret.Data[certs.CertFile])
	Expect(err).NotTo(HaveOccurred())
	hooks, err := csvWebhooks(ctx, in, version)
	Expect(err).NotTo(HaveOccurred())
	Expect(hooks.ClientConfigs()).NotTo(BeEmpty())
	addr := net.JoinHostPort(pod.Status.PodIP, strconv.Itoa(webhookPort))
	for name, cc := range hooks.ClientConfigs() {
		served, err := servedCertificate(ctx, addr, serviceDNSName(in.namespace), cc.CABundle)
		Expect(err).NotTo(HaveOccurred(), "webhook %s", name)
		Expect(served.Raw).To(Equal(leaf.Raw), "webhook %s", name)
	}
}

// expectSecretKept waits until OLM's webhook certificate Secret of the
// install has the manager Deployment as an owner, which the operator adds
// (certs.KeepOLMSecret) so that deleting the old CSV in an upgrade does not
// delete the Secret and make OLM issue a new CA. It returns the Secret.
func expectSecretKept(ctx context.Context, in install) *corev1.Secret {
	GinkgoHelper()
	d := in.deployment(ctx)
	secret := &corev1.Secret{}
	Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: in.namespace, Name: webhookService + "-cert"}, secret)).To(Succeed())
		g.Expect(secret.OwnerReferences).To(ContainElement(And(
			HaveField("Kind", "Deployment"), HaveField("Name", d.Name), HaveField("UID", d.UID))))
	}).WithContext(ctx).WithTimeout(time.Minute).WithPolling(250 * time.Millisecond).Should(Succeed())
	return secret
}

// expectTooBigRefused creates a Memcached one above the size policy's
// maximum in namespace and expects the API server to refuse it through the
// validating webhook. (Size 0 would never reach the webhook: the CRD's
// minimum of 1 refuses it first.) The first calls may fail otherwise while
// kube-proxy picks up the webhook Service's endpoint.
func expectTooBigRefused(ctx context.Context, namespace, name string) {
	GinkgoHelper()
	By("a Memcached above the maximum size in " + namespace + " is refused by the API server through the validating webhook")
	start := time.Now()
	Eventually(func() error {
		return k8s.Create(ctx, gen.Memcached(namespace, name, gen.WithSize(subscriptionMaxSize+1)))
	}).WithContext(ctx).WithTimeout(time.Minute).WithPolling(200 * time.Millisecond).Should(MatchError(ContainSubstring(denied)))
	GinkgoWriter.Printf("refused through the webhook in %s after %s\n", namespace, time.Since(start).Round(time.Millisecond))
}

// expectLogWithoutCredentials checks the operator logged the proxy URLs it
// propagates, with the credentials redacted, and the password nowhere.
func expectLogWithoutCredentials(log string) {
	GinkgoHelper()
	By("the operator's log names the proxy without its credentials")
	Expect(log).To(ContainSubstring("REDACTED@proxy.example.com"))
	Expect(log).NotTo(ContainSubstring(proxyPassword))
}

// The probe writes through the API server's admission chain without pause
// and records every answer, to measure how long admission fails while the
// upgrade replaces the webhook server underneath it.
//
// Each round makes two dry-run creates: one the webhooks must admit and one
// they must refuse. Dry-run requests run every admission webhook (the
// operator's declare no side effects) and store nothing, so the probe
// creates no pods however long it runs. An answer counts as a failure when
// it is not the one the object's content calls for: the good object refused
// for any reason, or the bad one admitted (admission failing open) or
// refused by anything but the webhook's own verdict (a call that never
// reached a webhook, timed out, or met no endpoint).
const (
	// probeInterval is the time between the starts of two rounds.
	probeInterval = 50 * time.Millisecond
	// probeTimeout bounds each request, beyond the webhooks' own timeout.
	probeTimeout = 15 * time.Second
)

// probeOptions configure a probe.
type probeOptions struct {
	// Client writes the objects; its dry-run creates go through admission.
	Client client.Client
	// Good and Bad make round i's objects: one admission must admit, one it
	// must refuse. Names must differ between rounds only if the objects
	// could exist; dry-run stores nothing.
	Good, Bad func(i int) client.Object
	// Refused tells whether an error is admission's verdict on the bad
	// object's content (for example the validating webhook's denial).
	Refused func(error) bool
}

// probeAnswer is one request and what came of it.
type probeAnswer struct {
	At time.Time
	// Good is true for the object admission must admit.
	Good bool
	// Err is the API server's answer, nil when the object was admitted.
	Err error
	// Failed is true when the answer is not the one the content calls for.
	Failed bool
}

// admissionProbe is a running probe.
type admissionProbe struct {
	opts   probeOptions
	cancel context.CancelFunc
	done   chan struct{}

	mu      sync.Mutex
	answers []probeAnswer
}

// startAdmissionProbe runs a probe until its Stop.
func startAdmissionProbe(ctx context.Context, opts probeOptions) *admissionProbe {
	ctx, cancel := context.WithCancel(ctx)
	p := &admissionProbe{opts: opts, cancel: cancel, done: make(chan struct{})}
	go p.run(ctx)
	return p
}

func (p *admissionProbe) run(ctx context.Context) {
	defer close(p.done)
	tick := time.NewTicker(probeInterval)
	defer tick.Stop()
	for i := 0; ; i++ {
		p.record(ctx, true, p.opts.Good(i))
		p.record(ctx, false, p.opts.Bad(i))
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

func (p *admissionProbe) record(ctx context.Context, good bool, obj client.Object) {
	at := time.Now()
	reqCtx, cancel := context.WithTimeout(ctx, probeTimeout)
	err := p.opts.Client.Create(reqCtx, obj, client.DryRunAll)
	cancel()
	if ctx.Err() != nil {
		return // stopped mid-request: no answer to judge
	}
	failed := err != nil
	if !good {
		failed = err == nil || !p.opts.Refused(err)
	}
	p.mu.Lock()
	p.answers = append(p.answers, probeAnswer{At: at, Good: good, Err: err, Failed: failed})
	p.mu.Unlock()
}

// Stop ends the probe and returns what it saw.
func (p *admissionProbe) Stop() probeReport {
	end := time.Now()
	p.cancel()
	<-p.done
	p.mu.Lock()
	defer p.mu.Unlock()
	return newProbeReport(p.answers, end)
}

// probeReport sums a probe's answers up.
type probeReport struct {
	// Requests is the number of answers judged, Duration the time they span.
	Requests int
	Duration time.Duration
	// Failures are the answers that were not what the content called for.
	Failures []probeAnswer
	// LongestWindow is the longest time from a failed request to the next
	// request that got the right answer (or to the end of the probe): how
	// long admission was broken, at the probe's resolution.
	LongestWindow time.Duration
}

func newProbeReport(answers []probeAnswer, end time.Time) probeReport {
	r := probeReport{Requests: len(answers)}
	if len(answers) > 0 {
		r.Duration = end.Sub(answers[0].At)
	}
	var windowStart time.Time
	for _, a := range answers {
		switch {
		case a.Failed:
			r.Failures = append(r.Failures, a)
			if windowStart.IsZero() {
				windowStart = a.At
			}
		case !windowStart.IsZero():
			r.LongestWindow = max(r.LongestWindow, a.At.Sub(windowStart))
			windowStart = time.Time{}
		}
	}
	if !windowStart.IsZero() {
		r.LongestWindow = max(r.LongestWindow, end.Sub(windowStart))
	}
	return r
}

// String is the report in one line, with the first failures' errors.
func (r probeReport) String() string {
	s := fmt.Sprintf("%d requests over %s, %d failed, longest window %s",
		r.Requests, r.Duration.Round(time.Millisecond), len(r.Failures), r.LongestWindow.Round(time.Millisecond))
	for i, f := range r.Failures {
		if i == 5 {
			s += fmt.Sprintf("; and %d more", len(r.Failures)-i)
			break
		}
		kind := "good object refused"
		if !f.Good {
			kind = "bad object"
		}
		s += fmt.Sprintf("; %s at %s: %v", kind, f.At.Format("15:04:05.000"), f.Err)
	}
	return s
}

// TestProbeReportWindows runs without the suite's cluster:
// go -C test test ./e2e -run TestProbeReportWindows.
func TestProbeReportWindows(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	ok := func(ms int) probeAnswer { return probeAnswer{At: at(ms), Good: true} }
	fail := func(ms int) probeAnswer {
		return probeAnswer{At: at(ms), Good: true, Err: errors.New("no endpoints"), Failed: true}
	}
	for _, tc := range []struct {
		name     string
		answers  []probeAnswer
		end      int
		failures int
		window   time.Duration
	}{
		{name: "nothing", end: 100},
		{name: "all right", answers: []probeAnswer{ok(0), ok(50), ok(100)}, end: 150},
		{name: "one failure", answers: []probeAnswer{ok(0), fail(50), ok(100)}, end: 150, failures: 1, window: 50 * time.Millisecond},
		{name: "the longest of two windows", answers: []probeAnswer{fail(0), ok(50), fail(100), fail(150), fail(200), ok(400)},
			end: 500, failures: 4, window: 300 * time.Millisecond},
		{name: "failing at the end lasts until the end", answers: []probeAnswer{ok(0), fail(100)}, end: 1000, failures: 1,
			window: 900 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newProbeReport(tc.answers, at(tc.end))
			if r.Requests != len(tc.answers) || len(r.Failures) != tc.failures || r.LongestWindow != tc.window {
				t.Errorf("report %s; want %d requests, %d failed, longest window %s", r, len(tc.answers), tc.failures, tc.window)
			}
		})
	}
}

// The namespaced installs, side by side on one cluster: two OwnNamespace
// installs (two teams, one operator each), a SingleNamespace and a
// MultiNamespace one. Their namespaces do not overlap, which is what OLM
// asks of installs that provide the same API.
var (
	ownA   = install{namespace: "team-a", targets: []string{"team-a"}}
	ownB   = install{namespace: "team-b", targets: []string{"team-b"}}
	single = install{namespace: "single-operator", targets: []string{"single-apps"}}
	multi  = install{namespace: "multi-operator", targets: []string{"multi-a", "multi-b"}}

	namespacedInstallList = []install{ownA, ownB, single, multi}
)

// unwatchedNamespace is targeted by no install.
const unwatchedNamespace = "unwatched"

// othersTargets are the namespaces that in may not touch: every other
// install's targets and unwatchedNamespace.
func othersTargets(in install) []string {
	out := []string{unwatchedNamespace}
	for _, other := range namespacedInstallList {
		if other.namespace != in.namespace {
			out = append(out, other.targets...)
		}
	}
	return out
}

// targetsBeyond are in's targets other than its own namespace: where OLM
// grants the CSV's permissions but not the bundle's Role.
func targetsBeyond(in install) []string {
	var out []string
	for _, ns := range in.targets {
		if ns != in.namespace {
			out = append(out, ns)
		}
	}
	return out
}

// namespacedInstalls install toVersion with toImage: the catalog serves both
// versions since the upgrade, so a new Subscription installs the channel's
// head.
func namespacedInstalls() {
	It("installs all four at once: every CSV succeeds and each operator watches exactly its OperatorGroup's namespaces", func(ctx SpecContext) {
		Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: unwatchedNamespace}})).To(Succeed())
		start := time.Now()
		for _, in := range namespacedInstallList {
			in.subscribe(ctx)
		}
		for _, in := range namespacedInstallList {
			in.expectInstalled(ctx, toVersion)
		}
		GinkgoWriter.Printf("%d namespaced installs Succeeded %s after their Subscriptions were created\n",
			len(namespacedInstallList), time.Since(start).Round(time.Millisecond))

		for _, in := range namespacedInstallList {
			By(in.String())
			og := in.operatorGroup(ctx)
			Expect(og.Status.Namespaces).To(ConsistOf(in.watched()))
			d := in.deployment(ctx)
			Expect(d.Spec.Template.Annotations).To(HaveKey("olm.targetNamespaces"))
			Expect(strings.Split(d.Spec.Template.Annotations["olm.targetNamespaces"], ",")).To(ConsistOf(in.targets))
			env := processEnv(ctx, in.operatorPod(ctx, toImage))
			Expect(strings.Split(env["WATCH_NAMESPACE"], ",")).To(ConsistOf(in.targets), "%s: the manager's WATCH_NAMESPACE", in)
		}
	}, SpecTimeout(5*time.Minute))

	It("calls each install's webhooks for its OperatorGroup's namespaces only", func(ctx SpecContext) {
		namespaceLabels := func(name string) labels.Set {
			ns := &corev1.Namespace{}
			Expect(k8s.Get(ctx, client.ObjectKey{Name: name}, ns)).To(Succeed())
			return ns.Labels
		}
		for _, in := range namespacedInstallList {
			hooks, err := csvWebhooks(ctx, in, toVersion)
			Expect(err).NotTo(HaveOccurred())
			csv := &operatorsv1alpha1.ClusterServiceVersion{}
			Expect(k8s.Get(ctx, client.ObjectKey{Namespace: in.namespace, Name: csvName(toVersion)}, csv)).To(Succeed())
			Expect(hooks.Hooks()).To(HaveLen(len(csv.Spec.WebhookDefinitions)), "%s: one webhook per webhookdefinition", in)
			for _, h := range hooks.Hooks() {
				sel, err := metav1.LabelSelectorAsSelector(h.NamespaceSelector)
				Expect(err).NotTo(HaveOccurred())
				for _, ns := range in.targets {
					Expect(sel.Matches(namespaceLabels(ns))).To(BeTrue(), "%s: webhook %s skips its target %s", in, h.Name, ns)
				}
				for _, ns := range othersTargets(in) {
					Expect(sel.Matches(namespaceLabels(ns))).To(BeFalse(), "%s: webhook %s is called for %s", in, h.Name, ns)
				}
			}
		}
	})

	It("grants each install the manager's rules in its own namespaces only, and cluster-wide nothing but the metrics reviews and the TLS profile", func(ctx SpecContext) {
		for _, in := range namespacedInstallList {
			By(in.String())
			sa := in.serviceAccount()
			for _, a := range managerAccess {
				for _, ns := range in.targets {
					Expect(can(ctx, sa, a, ns)).To(BeTrue(), "%s: %s in its target %s", in, a, ns)
				}
				for _, ns := range othersTargets(in) {
					Expect(can(ctx, sa, a, ns)).To(BeFalse(), "%s: %s in %s", in, a, ns)
				}
				Expect(can(ctx, sa, a, metav1.NamespaceAll)).To(BeFalse(), "%s: %s in every namespace", in, a)
			}
			for _, a := range clusterAccess {
				Expect(can(ctx, sa, a, "")).To(BeTrue(), "%s: %s", in, a)
			}
			for _, r := range clusterRules(ctx, sa) {
				Expect(r).To(clusterRule, "%s: cluster-wide rule %+v", in, r)
			}
			expectOwnNamespaceRulesThereOnly(ctx, in, append(targetsBeyond(in), othersTargets(in)...))
		}
	})

	It("keeps each install's OLM certificate Secret and installs its NetworkPolicies, with what reaches its own namespace only", func(ctx SpecContext) {
		for _, in := range namespacedInstallList {
			expectSecretKept(ctx, in)
			expectNetworkPolicies(ctx, in.String(), in.operatorPod(ctx, toImage), append(targetsBeyond(in), unwatchedNamespace))
		}
	})

	It("defaults, refuses and reconciles Memcached objects in every watched namespace, each through its own install", func(ctx SpecContext) {
		var made []*cachev1.Memcached
		for _, in := range namespacedInstallList {
			for _, ns := range in.targets {
				expectTooBigRefused(ctx, ns, "too-big")
				By("a Memcached without a size in " + ns + " is defaulted by the mutating webhook (dry run)")
				dry := gen.Memcached(ns, "no-size")
				Expect(k8s.Create(ctx, dry, client.DryRunAll)).To(Succeed())
				Expect(dry.Spec.Size).To(HaveValue(Equal(webhooks.DefaultSizePolicy().Default)))

				mc := gen.Memcached(ns, "cache", gen.WithSize(1))
				Expect(k8s.Create(ctx, mc)).To(Succeed())
				made = append(made, mc)
			}
		}
		for _, mc := range made {
			expectReconciledWithProxy(ctx, mc, 1)
		}
	}, SpecTimeout(5*time.Minute))

	It("leaves a Memcached in a namespace no install watches alone, while the CRD's schema still refuses what memcached cannot run", func(ctx SpecContext) {
		By("no webhook is called there: a size above the maximum is admitted, a missing size stays missing")
		tooBig := gen.Memcached(unwatchedNamespace, "too-big", gen.WithSize(webhooks.DefaultSizePolicy().Max+1))
		Expect(k8s.Create(ctx, tooBig)).To(Succeed())
		noSize := gen.Memcached(unwatchedNamespace, "no-size")
		Expect(k8s.Create(ctx, noSize)).To(Succeed())
		Expect(noSize.Spec.Size).To(BeNil(), "not defaulted")
		Expect(noSize.Spec.Memory).To(HaveValue(Equal(resource.MustParse("64Mi"))), "the schema's defaults hold")

		By("the schema's rules hold everywhere: memory that is not a whole MiB is refused with its field path")
		err := k8s.Create(ctx, gen.Memcached(unwatchedNamespace, "bad-memory", gen.WithMemory("1536Ki")))
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
		Expect(err).To(MatchError(ContainSubstring("spec.memory")))

		By("after a later Memcached in a watched namespace is reconciled, nothing exists for the unwatched ones")
		later := gen.Memcached(ownA.namespace, "after-unwatched", gen.WithSize(1))
		Expect(k8s.Create(ctx, later)).To(Succeed())
		expectReconciledWithProxy(ctx, later, 1)
		Consistently(func(g Gomega) {
			var deployments appsv1.DeploymentList
			g.Expect(k8s.List(ctx, &deployments, client.InNamespace(unwatchedNamespace))).To(Succeed())
			g.Expect(deployments.Items).To(BeEmpty())
			var services corev1.ServiceList
			g.Expect(k8s.List(ctx, &services, client.InNamespace(unwatchedNamespace))).To(Succeed())
			g.Expect(services.Items).To(BeEmpty())
			var pdbs policyv1.PodDisruptionBudgetList
			g.Expect(k8s.List(ctx, &pdbs, client.InNamespace(unwatchedNamespace))).To(Succeed())
			g.Expect(pdbs.Items).To(BeEmpty())
			for _, mc := range []*cachev1.Memcached{tooBig, noSize} {
				got := &cachev1.Memcached{}
				g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(mc), got)).To(Succeed())
				g.Expect(got.Status).To(BeZero(), "%s has a status", mc.Name)
			}
		}).WithContext(ctx).WithTimeout(3 * time.Second).WithPolling(500 * time.Millisecond).Should(Succeed())
	}, SpecTimeout(3*time.Minute))

	It("refuses a fifth install whose namespaces overlap another's, with OLM's reason, and the first keeps working", func(ctx SpecContext) {
		overlap := install{namespace: "overlap-operator", targets: []string{ownA.namespace}}
		overlap.subscribe(ctx)
		Eventually(func(g Gomega) {
			csv := &operatorsv1alpha1.ClusterServiceVersion{}
			g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: overlap.namespace, Name: csvName(toVersion)}, csv)).To(Succeed())
			g.Expect(csv.Status.Phase).To(Equal(operatorsv1alpha1.CSVPhaseFailed))
			g.Expect(csv.Status.Reason).To(Equal(operatorsv1alpha1.CSVReasonInterOperatorGroupOwnerConflict))
			g.Expect(csv.Status.Message).To(Equal("intersecting operatorgroups provide the same apis"))
			err := k8s.Get(ctx, client.ObjectKey{Namespace: overlap.namespace, Name: deploymentName}, &appsv1.Deployment{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "no operator runs for it (err %v)", err)
		}).WithContext(ctx).WithTimeout(3 * time.Minute).WithPolling(250 * time.Millisecond).Should(Succeed())

		ownA.expectInstalled(ctx, toVersion)
		mc := gen.Memcached(ownA.namespace, "after-overlap", gen.WithSize(1))
		Expect(k8s.Create(ctx, mc)).To(Succeed())
		expectReconciledWithProxy(ctx, mc, 1)
	}, SpecTimeout(4*time.Minute))
}
