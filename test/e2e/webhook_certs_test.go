package e2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	cmapiutil "github.com/cert-manager/cert-manager/pkg/api/util"
	cmapi "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	cmmeta "github.com/cert-manager/cert-manager/pkg/apis/meta/v1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	certutil "k8s.io/client-go/util/cert"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
	"github.com/example-inc/memcached-operator/api/v1/gen"
	"github.com/example-inc/memcached-operator/certs"
	"github.com/example-inc/memcached-operator/certs/certstest"
	"github.com/example-inc/memcached-operator/hack/repo"
	"github.com/example-inc/memcached-operator/test/framework/harness"
	"github.com/example-inc/memcached-operator/test/framework/manifest"
	"github.com/example-inc/memcached-operator/test/framework/operatorproc"
	"github.com/example-inc/memcached-operator/test/framework/scrape"
	"github.com/example-inc/memcached-operator/test/framework/webhookroute"
	"github.com/example-inc/memcached-operator/webhooks"
)

// The `kubectl apply` install path, with cert-manager issuing and renewing
// the webhook's serving certificate and injecting its CA.
var _ = Describe("kubectl apply with cert-manager", Ordered, Label(labelHost, labelInstall, labelTLS, labelMonitoring), func() {
	var (
		install        *installation
		webhookService *corev1.Service
		webhookCert    *cmapi.Certificate
		metricsCert    *cmapi.Certificate

		// Where the operator reads its certificates: the test writes the
		// Secrets there, as kubelet would into the pod's Secret volumes.
		webhookCertDir = func() string { return filepath.Join(workDir, "install-webhook-certs") }
		metricsCertDir = func() string { return filepath.Join(workDir, "install-metrics-certs") }

		operator      *operatorproc.Operator
		testNamespace = "e2e"
	)
	webhookServiceName := func() string { return webhookService.Name + "." + webhookService.Namespace + ".svc" }

	// servesRenewed puts renewed into dir, as kubelet updates a mounted
	// Secret, and waits until the server on port presents its certificate,
	// from the operator process that ran before.
	servesRenewed := func(ctx context.Context, dir string, port func() int, renewed *corev1.Secret) {
		GinkgoHelper()
		pid := operator.PID()
		By("updating the operator's files from the renewed Secret, as kubelet does for a mounted Secret")
		Expect(certstest.WriteSecretVolume(dir, renewed.Data)).To(Succeed())
		By("checking the server presents the new certificate")
		start := time.Now()
		Eventually(func() (*big.Int, error) { return servedCertificateSerial(ctx, port()) }).
			WithContext(ctx).WithTimeout(30 * time.Second).WithPolling(100 * time.Millisecond).Should(Equal(secretSerial(renewed)))
		GinkgoWriter.Printf("new certificate served %s after the files changed\n", time.Since(start).Round(time.Millisecond))
		Expect(operator.Running()).To(BeTrue())
		Expect(operator.PID()).To(Equal(pid), "the operator was not restarted")
	}

	AfterAll(func(ctx SpecContext) {
		if operator != nil {
			Expect(operator.Stop(15 * time.Second)).To(Succeed())
			if CurrentSpecReport().Failed() {
				GinkgoWriter.Println(operator.Tail(60))
			}
		}
		// The next specs share the cluster: what this container installed
		// goes, its fail-closed webhooks first; the CRD and cert-manager
		// stay.
		manifests, err := buildConfigDefault()
		Expect(err).NotTo(HaveOccurred())
		uninstall(ctx, manifests)
		Expect(client.IgnoreNotFound(k8s.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: testNamespace}}))).To(Succeed())
	}, NodeTimeout(4*time.Minute))

	It("installs config/default; cert-manager issues the webhook certificate and injects its CA", func(ctx SpecContext) {
		manifests, err := buildConfigDefault()
		Expect(err).NotTo(HaveOccurred())
		install, err = decodeInstallation(manifests)
		Expect(err).NotTo(HaveOccurred())
		webhookService, err = install.webhookService()
		Expect(err).NotTo(HaveOccurred())
		webhookCert, err = install.injectedCertificate()
		Expect(err).NotTo(HaveOccurred())

		By("applying kustomize build config/default with kubectl, as make deploy does")
		start := time.Now()
		Expect(kubectl(ctx, manifests, "apply", "-f", "-")).Error().NotTo(HaveOccurred())

		By("waiting for the Certificate to be Ready")
		expectCertificateReady(ctx, webhookCert)
		GinkgoWriter.Printf("Certificate Ready %s after kubectl apply\n", time.Since(start).Round(time.Millisecond))

		By("checking the Secret holds a certificate for <service>.<namespace>.svc, signed by its CA")
		secret := getSecret(ctx, webhookCert.Namespace, webhookCert.Spec.SecretName)
		leaf, ca := parseSecret(secret)
		Expect(leaf.Verify(verifyOptions(ca, webhookServiceName()))).Error().NotTo(HaveOccurred())

		By("checking the CA is injected into both webhook configurations")
		Eventually(func(g Gomega) {
			bundles := webhookCABundles(ctx, g, install)
			g.Expect(bundles).To(HaveLen(4), "four webhooks: mutating and validating, for the Memcached and its scale")
			for name, bundle := range bundles {
				g.Expect(bundle).To(Equal(secret.Data["ca.crt"]), "webhook %s", name)
			}
		}).WithContext(ctx).WithTimeout(30 * time.Second).Should(Succeed())
		GinkgoWriter.Printf("CA injected %s after kubectl apply\n", time.Since(start).Round(time.Millisecond))

		By("waiting for the metrics Certificate too")
		metricsSecret, err := install.mountedSecret(install.managerArg("metrics-cert-path"))
		Expect(err).NotTo(HaveOccurred())
		for _, c := range install.certificates {
			if c.Spec.SecretName == metricsSecret {
				metricsCert = c
			}
		}
		Expect(metricsCert).NotTo(BeNil())
		expectCertificateReady(ctx, metricsCert)
	}, SpecTimeout(3*time.Minute))

	It("runs the operator with the issued certificate; the API server calls it through the injected CA", func(ctx SpecContext) {
		Expect(webhookCert).NotTo(BeNil(), "needs the previous spec")

		By("writing the certificate Secrets to the directories the operator reads, as kubelet does for a mounted Secret")
		secret := getSecret(ctx, webhookCert.Namespace, webhookCert.Spec.SecretName)
		Expect(certstest.WriteSecretVolume(webhookCertDir(), secret.Data)).To(Succeed())
		metricsSecret := getSecret(ctx, metricsCert.Namespace, metricsCert.Spec.SecretName)
		Expect(certstest.WriteSecretVolume(metricsCertDir(), metricsSecret.Data)).To(Succeed())

		By("starting the operator binary on the host, webhooks in mounted mode")
		start := time.Now()
		var err error
		operator, err = operatorproc.Start(ctx, operatorproc.Options{
			Binary:         operatorBinary,
			Kubeconfig:     cluster.KubeconfigPath(),
			LogPath:        filepath.Join(workDir, "install-operator.log"),
			Webhooks:       operatorproc.WebhooksMounted,
			WebhookCertDir: webhookCertDir(),
			SecureMetrics:  true,
			MetricsCertDir: metricsCertDir(),
			Env:            relatedImageEnv(),
		})
		Expect(err).NotTo(HaveOccurred())
		GinkgoWriter.Printf("operator ready %s after start\n", time.Since(start).Round(time.Millisecond))
		webhookPort, metricsPort := operator.Ports().Webhook, operator.Ports().Metrics

		By("checking both servers present the issued certificates")
		Expect(servedCertificateSerial(ctx, webhookPort)).To(Equal(secretSerial(secret)))
		Expect(servedCertificateSerial(ctx, metricsPort)).To(Equal(secretSerial(metricsSecret)))

		// config/default's manager pod cannot start (its image, controller,
		// is not on the node), so the Service's endpoints lead nowhere:
		// route the API server's calls to the host, still through the
		// Service's name and the injected CA (see package webhookroute).
		By("routing the API server's webhook calls to the operator on the host")
		hooks, err := webhookroute.Get(ctx, k8s, install.webhookNames())
		Expect(err).NotTo(HaveOccurred())
		Expect(webhookroute.ToHost(ctx, k8s, hooks, webhookPort)).Error().NotTo(HaveOccurred())

		By("creating a Memcached of size 40: the API server rejects it")
		Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: testNamespace}})).To(Succeed())
		start = time.Now()
		Eventually(func() error {
			return k8s.Create(ctx, gen.Memcached(testNamespace, "too-big", gen.WithSize(40)))
		}).WithContext(ctx).WithTimeout(30 * time.Second).WithPolling(200 * time.Millisecond).Should(MatchError(ContainSubstring(denied)))
		GinkgoWriter.Printf("first webhook answer %s after routing\n", time.Since(start).Round(time.Millisecond))

		By("creating a Memcached without a size: defaulted, then reconciled")
		mc := gen.Memcached(testNamespace, "cache")
		Expect(k8s.Create(ctx, mc)).To(Succeed())
		want := webhooks.DefaultSizePolicy().Default
		Expect(mc.Spec.Size).To(HaveValue(Equal(want)))
		start = time.Now()
		Eventually(func(g Gomega) {
			d := &appsv1.Deployment{}
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(mc), d)).To(Succeed())
			g.Expect(d.Status.ReadyReplicas).To(Equal(want))
			got := &cachev1.Memcached{}
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(mc), got)).To(Succeed())
			g.Expect(got.Status.Nodes).To(HaveLen(int(want)))
		}).WithContext(ctx).WithTimeout(60 * time.Second).Should(Succeed())
		GinkgoWriter.Printf("Memcached reconciled (%d ready pods, status.nodes filled) in %s\n", want, time.Since(start).Round(time.Millisecond))
	}, SpecTimeout(3*time.Minute))

	It("is scraped as config/prometheus's ServiceMonitor says, with a token from its Secret, over TLS verified for the Service", func(ctx SpecContext) {
		Expect(operator).NotTo(BeNil(), "needs the previous spec")

		By("installing the Prometheus Operator's CRDs, generated from its API module")
		_, err := envtest.InstallCRDs(cluster.RestConfig(), envtest.CRDInstallOptions{
			Paths: []string{repo.PrometheusOperatorCRDDir()}, ErrorIfPathMissing: true,
		})
		Expect(err).NotTo(HaveOccurred(), "run make prometheus-operator-crds")

		By("applying config/prometheus with kubectl apply -k, as docs/operator-metrics.md says")
		prometheus := filepath.Join(repo.Root(), "config", "prometheus")
		Expect(kubectl(ctx, nil, "apply", "-k", prometheus)).Error().NotTo(HaveOccurred())
		DeferCleanup(func(ctx SpecContext) {
			Expect(kubectl(ctx, nil, "delete", "--ignore-not-found", "-k", prometheus)).Error().NotTo(HaveOccurred())
		})

		By("blocking a Memcached: someone else's Service has its name")
		theirs := gen.UnrelatedService(testNamespace, "taken")
		Expect(k8s.Create(ctx, theirs)).To(Succeed())
		mc := gen.Memcached(testNamespace, "taken", gen.WithSize(1))
		Expect(k8s.Create(ctx, mc)).To(Succeed())
		DeferCleanup(func(ctx SpecContext) {
			Expect(k8s.Delete(ctx, mc)).To(Succeed())
			Expect(k8s.Delete(ctx, theirs)).To(Succeed())
		})

		By("reading the ServiceMonitor back from the API server, and what it names")
		var monitors monitoringv1.ServiceMonitorList
		Expect(k8s.List(ctx, &monitors)).To(Succeed())
		Expect(monitors.Items).To(HaveLen(1))
		var s *monitorScrape
		Eventually(func(g Gomega) {
			s = scrapeFromMonitor(ctx, g, &monitors.Items[0], operator.Ports().Metrics)
		}).WithContext(ctx).WithTimeout(30 * time.Second).Should(Succeed())
		Expect(":"+s.servicePort.TargetPort.String()).To(Equal(install.managerArg("metrics-bind-address")),
			"the Service's port leads to the manager's metrics server")

		By("scraping: 200 over verified TLS, with the blocked Memcached's series")
		var served []byte
		Eventually(func(g Gomega) {
			// cert-manager may have issued the metrics certificate again
			// since the operator started: update its files as kubelet
			// updates a mounted Secret, or the CA in the Secret would not
			// be the one the served certificate chains to.
			mounted := getSecretG(ctx, g, metricsCert.Namespace, metricsCert.Spec.SecretName)
			if !bytes.Equal(mounted.Data["tls.crt"], served) {
				g.Expect(certstest.WriteSecretVolume(metricsCertDir(), mounted.Data)).To(Succeed())
				served = mounted.Data["tls.crt"]
			}
			code, body, err := s.get(ctx)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(code).To(Equal(http.StatusOK), "body: %.300s", body)
			m, err := scrape.Parse(body)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(m.Sum("memcached_operator_memcached_blocked", map[string]string{
				"namespace": testNamespace, "name": mc.Name, "reason": cachev1.ReasonNameInUse,
			})).To(Equal(1.0), "memcached_operator_memcached_blocked of %s/%s", testNamespace, mc.Name)
		}).WithContext(ctx).WithTimeout(60 * time.Second).WithPolling(time.Second).Should(Succeed())

		By("checking that the scrape verifies the server: another server name fails")
		s.serverName = "another." + s.serverName
		_, _, err = s.get(ctx)
		Expect(verificationError(err)).To(Succeed())
	}, SpecTimeout(3*time.Minute))

	It("renews the certificate through cert-manager; the webhook serves the new one without a restart", func(ctx SpecContext) {
		Expect(operator).NotTo(BeNil(), "needs the previous spec")
		pid := operator.PID()
		old, renewed := renewCertificate(ctx, webhookCert)
		servesRenewed(ctx, webhookCertDir(), func() int { return operator.Ports().Webhook }, renewed)

		// cert-manager's CA injector adds the new CA to the bundle and keeps
		// the old one (feature CAInjectorMerging, on by default), so that
		// servers still presenting the old certificate stay trusted while the
		// new one reaches them.
		By("checking the API server trusts it: the new CA is injected and a bad Memcached is still rejected")
		newLeaf, newCA := parseSecret(renewed)
		_, oldCA := parseSecret(old)
		Eventually(func(g Gomega) {
			for name, bundle := range webhookCABundles(ctx, g, install) {
				cas, err := certutil.ParseCertsPEM(bundle)
				g.Expect(err).NotTo(HaveOccurred(), "webhook %s", name)
				g.Expect(cas).To(ContainElement(newCA), "webhook %s", name)
				g.Expect(cas).To(ContainElement(oldCA), "webhook %s", name)
				roots := x509.NewCertPool()
				for _, ca := range cas {
					roots.AddCert(ca)
				}
				g.Expect(newLeaf.Verify(x509.VerifyOptions{Roots: roots, DNSName: webhookServiceName()})).
					Error().NotTo(HaveOccurred(), "webhook %s", name)
			}
		}).WithContext(ctx).WithTimeout(30 * time.Second).Should(Succeed())
		Eventually(func() error {
			return k8s.Create(ctx, gen.Memcached(testNamespace, "too-big-after-renewal", gen.WithSize(40)))
		}).WithContext(ctx).WithTimeout(30 * time.Second).WithPolling(200 * time.Millisecond).Should(MatchError(ContainSubstring(denied)))
		mc := gen.Memcached(testNamespace, "after-renewal", gen.WithSize(2))
		Expect(k8s.Create(ctx, mc)).To(Succeed())

		By("checking the operator was not restarted")
		Expect(operator.Running()).To(BeTrue())
		Expect(operator.PID()).To(Equal(pid))
	}, SpecTimeout(3*time.Minute))

	It("renews the metrics certificate; the metrics server serves the new one without a restart", func(ctx SpecContext) {
		Expect(operator).NotTo(BeNil(), "needs the operator started above")
		_, renewed := renewCertificate(ctx, metricsCert)
		servesRenewed(ctx, metricsCertDir(), func() int { return operator.Ports().Metrics }, renewed)
	}, SpecTimeout(2*time.Minute))
})

// renewCertificate asks cert-manager to renew cert, as cmctl renew does (an
// Issuing condition on the Certificate, written with an update of the
// status), reports the time from the request to the new Secret, and returns
// the Secret before and after, once the Certificate is Ready again.
func renewCertificate(ctx context.Context, cert *cmapi.Certificate) (old, renewed *corev1.Secret) {
	GinkgoHelper()
	old = getSecret(ctx, cert.Namespace, cert.Spec.SecretName)
	oldSerial := secretSerial(old)
	var revision int
	By("asking cert-manager to renew " + cert.Name)
	start := time.Now()
	Eventually(func() error {
		crt := &cmapi.Certificate{}
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(cert), crt); err != nil {
			return err
		}
		if crt.Status.Revision != nil {
			revision = *crt.Status.Revision
		}
		cmapiutil.SetCertificateCondition(crt, crt.Generation, cmapi.CertificateConditionIssuing, cmmeta.ConditionTrue,
			"ManuallyTriggered", "Certificate re-issuance manually triggered")
		return k8s.Status().Update(ctx, crt)
	}).WithContext(ctx).WithTimeout(10 * time.Second).Should(Succeed())

	Eventually(func(g Gomega) {
		renewed = getSecretG(ctx, g, cert.Namespace, cert.Spec.SecretName)
		g.Expect(secretSerial(renewed)).NotTo(Equal(oldSerial))
	}).WithContext(ctx).WithTimeout(60 * time.Second).WithPolling(50 * time.Millisecond).Should(Succeed())
	AddReportEntry(cert.Name+": renewal request to new Secret", time.Since(start).Round(time.Millisecond))
	GinkgoWriter.Printf("%s renewed: serial %x -> %x\n", cert.Name, oldSerial, secretSerial(renewed))
	Eventually(func(g Gomega) {
		crt := &cmapi.Certificate{}
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(cert), crt)).To(Succeed())
		g.Expect(crt.Status.Revision).To(HaveValue(BeNumerically(">", revision)))
		g.Expect(cmapiutil.CertificateHasCondition(crt, cmapi.CertificateCondition{
			Type: cmapi.CertificateConditionReady, Status: cmmeta.ConditionTrue,
		})).To(BeTrue())
	}).WithContext(ctx).WithTimeout(60 * time.Second).Should(Succeed())
	return old, renewed
}

// expectCertificateReady waits until cert-manager says cert is Ready.
func expectCertificateReady(ctx context.Context, cert *cmapi.Certificate) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		crt := &cmapi.Certificate{}
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(cert), crt)).To(Succeed())
		g.Expect(cmapiutil.CertificateHasCondition(crt, cmapi.CertificateCondition{
			Type: cmapi.CertificateConditionReady, Status: cmmeta.ConditionTrue,
		})).To(BeTrue(), "%s conditions: %+v", cert.Name, crt.Status.Conditions)
	}).WithContext(ctx).WithTimeout(60 * time.Second).Should(Succeed())
}

func getSecret(ctx context.Context, namespace, name string) *corev1.Secret {
	GinkgoHelper()
	s := &corev1.Secret{}
	Expect(k8s.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, s)).To(Succeed())
	return s
}

func getSecretG(ctx context.Context, g Gomega, namespace, name string) *corev1.Secret {
	s := &corev1.Secret{}
	g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, s)).To(Succeed())
	return s
}

// parseSecret returns the certificate and the CA of a kubernetes.io/tls
// Secret written by cert-manager.
func parseSecret(s *corev1.Secret) (leaf, ca *x509.Certificate) {
	GinkgoHelper()
	parse := func(key string) *x509.Certificate {
		c, err := parseCertificatePEM(s.Data[key])
		Expect(err).NotTo(HaveOccurred(), "Secret %s/%s: %s", s.Namespace, s.Name, key)
		return c
	}
	return parse(certs.CertFile), parse(certs.CAFile)
}

func secretSerial(s *corev1.Secret) *big.Int {
	GinkgoHelper()
	leaf, _ := parseSecret(s)
	return leaf.SerialNumber
}

// webhookCABundles is the caBundle of every webhook of the installed
// configurations, by webhook name.
func webhookCABundles(ctx context.Context, g Gomega, in *installation) map[string][]byte {
	hooks, err := webhookroute.Get(ctx, k8s, in.webhookNames())
	g.Expect(err).NotTo(HaveOccurred())
	return hooks.CABundles()
}

// createCAIssuer creates, in namespace, a CA Issuer named name whose CA
// cert-manager issues from a SelfSigned Issuer: the chain most clusters
// start with, and one whose Secrets carry ca.crt.
func createCAIssuer(ctx context.Context, namespace, name string) {
	GinkgoHelper()
	selfSigned := &cmapi.Issuer{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name + "-selfsigned"},
		Spec:       cmapi.IssuerSpec{IssuerConfig: cmapi.IssuerConfig{SelfSigned: &cmapi.SelfSignedIssuer{}}},
	}
	ca := &cmapi.Certificate{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: cmapi.CertificateSpec{
			IsCA:       true,
			CommonName: name,
			SecretName: name,
			IssuerRef:  cmmeta.IssuerReference{Kind: cmapi.IssuerKind, Name: selfSigned.Name},
		},
	}
	issuer := &cmapi.Issuer{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec:       cmapi.IssuerSpec{IssuerConfig: cmapi.IssuerConfig{CA: &cmapi.CAIssuer{SecretName: ca.Spec.SecretName}}},
	}
	for _, o := range []client.Object{selfSigned, ca, issuer} {
		Expect(k8s.Create(ctx, o)).To(Succeed())
	}
}

// servedCertificateSerial is the serial number of the certificate a TLS
// server at 127.0.0.1:port presents: which certificate it serves, not
// whether it is trusted (the API server checks that).
func servedCertificateSerial(ctx context.Context, port int) (*big.Int, error) {
	st, err := certstest.Handshake(ctx, net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), certstest.Offer{})
	if err != nil {
		return nil, err
	}
	return st.PeerCertificates[0].SerialNumber, nil
}

// servedCertificate connects to the webhook server at addr as the API
// server does for a service reference, with serverName
// <service>.<namespace>.svc and caBundle as the only roots, and returns the
// certificate it presented. The handshake fails unless that certificate
// verifies for the name against the bundle.
func servedCertificate(ctx context.Context, addr, serverName string, caBundle []byte) (*x509.Certificate, error) {
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(caBundle) {
		return nil, fmt.Errorf("caBundle holds no PEM certificate")
	}
	d := tls.Dialer{Config: &tls.Config{ServerName: serverName, RootCAs: roots, MinVersion: tls.VersionTLS12}}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	defer func() { _ = conn.Close() }()
	return conn.(*tls.Conn).ConnectionState().PeerCertificates[0], nil
}

// parseCertificatePEM parses the first certificate of a PEM file.
func parseCertificatePEM(data []byte) (*x509.Certificate, error) {
	block, _ := pem.Decode(data)
	if block == nil || block.Type != "CERTIFICATE" {
		return nil, fmt.Errorf("no PEM certificate")
	}
	return x509.ParseCertificate(block.Bytes)
}

// verifyOptions verify a certificate for dnsName with ca as the only root.
func verifyOptions(ca *x509.Certificate, dnsName string) x509.VerifyOptions {
	roots := x509.NewCertPool()
	roots.AddCert(ca)
	return x509.VerifyOptions{Roots: roots, DNSName: dnsName}
}

// buildConfigDefault runs `kustomize build config/default`.
func buildConfigDefault() ([]byte, error) {
	return harness.KustomizeBuild(filepath.Join(repo.Root(), "config", "default"))
}

// uninstall deletes what manifests (config/default) applied, but the CRD,
// waiting until it is gone: the next specs on the cluster keep their
// Memcached objects and find no webhook of this installation.
func uninstall(ctx context.Context, manifests []byte) {
	GinkgoHelper()
	objs, err := manifest.Decode(manifests)
	Expect(err).NotTo(HaveOccurred())
	var docs [][]byte
	for _, u := range objs {
		if u.GetKind() == "CustomResourceDefinition" {
			continue
		}
		b, err := u.MarshalJSON()
		Expect(err).NotTo(HaveOccurred())
		docs = append(docs, b)
	}
	Expect(kubectl(ctx, bytes.Join(docs, []byte("\n")), "delete", "--ignore-not-found", "--wait", "--timeout=3m", "-f", "-")).
		Error().NotTo(HaveOccurred())
}

// installation is the decoded output of config/default, with the objects
// the certificate wiring connects.
type installation struct {
	certificates map[string]*cmapi.Certificate
	issuers      map[string]*cmapi.Issuer
	services     map[string]*corev1.Service
	manager      *appsv1.Deployment
	mutating     []*admissionregistrationv1.MutatingWebhookConfiguration
	validating   []*admissionregistrationv1.ValidatingWebhookConfiguration
}

func manifestScheme() *runtime.Scheme {
	return gen.Scheme(cmapi.AddToScheme)
}

// decodeInstallation decodes every document of a multi-document YAML stream
// into the API types; kinds it does not know (the CRD) are skipped.
func decodeInstallation(manifests []byte) (*installation, error) {
	in := &installation{
		certificates: map[string]*cmapi.Certificate{},
		issuers:      map[string]*cmapi.Issuer{},
		services:     map[string]*corev1.Service{},
	}
	decoder := serializer.NewCodecFactory(manifestScheme()).UniversalDeserializer()
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(manifests)))
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		obj, gvk, err := decoder.Decode(doc, nil, nil)
		if runtime.IsNotRegisteredError(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("decoding %s: %w", gvk, err)
		}
		switch o := obj.(type) {
		case *cmapi.Certificate:
			in.certificates[o.Namespace+"/"+o.Name] = o
		case *cmapi.Issuer:
			in.issuers[o.Namespace+"/"+o.Name] = o
		case *corev1.Service:
			in.services[o.Namespace+"/"+o.Name] = o
		case *appsv1.Deployment:
			if in.manager != nil {
				return nil, fmt.Errorf("two Deployments: %s and %s", in.manager.Name, o.Name)
			}
			in.manager = o
		case *admissionregistrationv1.MutatingWebhookConfiguration:
			in.mutating = append(in.mutating, o)
		case *admissionregistrationv1.ValidatingWebhookConfiguration:
			in.validating = append(in.validating, o)
		}
	}
	if in.manager == nil {
		return nil, errors.New("no manager Deployment")
	}
	return in, nil
}

// webhookService is the Service every webhook of the configurations calls.
// webhookNames are the names of the webhook configurations.
func (in *installation) webhookNames() webhookroute.Names {
	var n webhookroute.Names
	for _, m := range in.mutating {
		n.Mutating = append(n.Mutating, m.Name)
	}
	for _, v := range in.validating {
		n.Validating = append(n.Validating, v.Name)
	}
	return n
}

func (in *installation) webhookService() (*corev1.Service, error) {
	var refs []admissionregistrationv1.WebhookClientConfig
	for _, m := range in.mutating {
		for _, w := range m.Webhooks {
			refs = append(refs, w.ClientConfig)
		}
	}
	for _, v := range in.validating {
		for _, w := range v.Webhooks {
			refs = append(refs, w.ClientConfig)
		}
	}
	var key string
	for _, cc := range refs {
		if cc.Service == nil {
			return nil, errors.New("a webhook calls a URL, not a Service")
		}
		k := cc.Service.Namespace + "/" + cc.Service.Name
		if key != "" && k != key {
			return nil, fmt.Errorf("webhooks call two Services: %s and %s", key, k)
		}
		key = k
	}
	svc := in.services[key]
	if svc == nil {
		return nil, fmt.Errorf("the webhooks call Service %q, which config/default does not create", key)
	}
	return svc, nil
}

// injectedCertificate is the Certificate whose CA cert-manager injects into
// every webhook configuration (annotation cert-manager.io/inject-ca-from).
func (in *installation) injectedCertificate() (*cmapi.Certificate, error) {
	var key string
	var annotations []map[string]string
	for _, m := range in.mutating {
		annotations = append(annotations, m.Annotations)
	}
	for _, v := range in.validating {
		annotations = append(annotations, v.Annotations)
	}
	if len(annotations) == 0 {
		return nil, errors.New("no webhook configurations")
	}
	for _, a := range annotations {
		k := a["cert-manager.io/inject-ca-from"]
		if k == "" || (key != "" && k != key) {
			return nil, fmt.Errorf("webhook configurations inject CAs from %q and %q", key, k)
		}
		key = k
	}
	crt := in.certificates[key]
	if crt == nil {
		return nil, fmt.Errorf("inject-ca-from names Certificate %q, which config/default does not create", key)
	}
	return crt, nil
}

// mountedSecret is the Secret the manager mounts at dir, and the manager's
// flag value for it, if any.
func (in *installation) mountedSecret(dir string) (string, error) {
	pod := in.manager.Spec.Template.Spec
	var volume string
	for _, c := range pod.Containers {
		for _, m := range c.VolumeMounts {
			if m.MountPath == dir {
				volume = m.Name
			}
		}
	}
	for _, v := range pod.Volumes {
		if v.Name == volume && v.Secret != nil {
			return v.Secret.SecretName, nil
		}
	}
	return "", fmt.Errorf("the manager mounts no Secret at %s", dir)
}

// managerArg is the value of the manager's --name flag, "" when not given.
func (in *installation) managerArg(name string) string {
	for _, c := range in.manager.Spec.Template.Spec.Containers {
		for _, a := range c.Args {
			if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
				return v
			}
		}
	}
	return ""
}

// serviceDNSNames are the names a Service's serving certificate must carry.
func serviceDNSNames(svc *corev1.Service) []string {
	base := svc.Name + "." + svc.Namespace + ".svc"
	return []string{base, base + ".cluster.local"}
}

// TestConfigDefaultCertificates checks config/default's certificate wiring
// in the types cert-manager itself decodes: each Certificate carries the DNS
// names of the Service it serves, comes from an Issuer that is installed
// with it, and lands in the Secret the manager mounts where it reads it.
func TestConfigDefaultCertificates(t *testing.T) {
	out, err := buildConfigDefault()
	if err != nil {
		t.Fatal(err)
	}
	in, err := decodeInstallation(out)
	if err != nil {
		t.Fatal(err)
	}

	webhookService, err := in.webhookService()
	if err != nil {
		t.Fatal(err)
	}
	webhookCert, err := in.injectedCertificate()
	if err != nil {
		t.Fatal(err)
	}
	metricsCertDir := in.managerArg("metrics-cert-path")
	metricsService := in.services[in.manager.Namespace+"/memcached-operator-controller-manager-metrics-service"]
	if metricsService == nil {
		t.Fatal("no metrics Service")
	}

	tests := []struct {
		name     string
		cert     *cmapi.Certificate
		service  *corev1.Service
		mountDir string
	}{
		// The manager reads the webhook certificate from the default
		// directory of mounted mode: config/default passes no flag for it.
		{name: "webhook", cert: webhookCert, service: webhookService, mountDir: certs.DefaultMountedDir},
		{name: "metrics", cert: in.certificates[in.manager.Namespace+"/memcached-operator-metrics-certs"], service: metricsService, mountDir: metricsCertDir},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.cert == nil {
				t.Fatal("no Certificate")
			}
			if tt.mountDir == "" {
				t.Fatal("the manager is not told where the certificate is")
			}
			if got, want := tt.cert.Spec.DNSNames, serviceDNSNames(tt.service); !slices.Equal(got, want) {
				t.Errorf("Certificate %s dnsNames %v, want %v (from Service %s/%s)",
					tt.cert.Name, got, want, tt.service.Namespace, tt.service.Name)
			}
			secret, err := in.mountedSecret(tt.mountDir)
			if err != nil {
				t.Fatal(err)
			}
			if tt.cert.Spec.SecretName != secret {
				t.Errorf("Certificate %s writes Secret %q, the manager mounts %q at %s",
					tt.cert.Name, tt.cert.Spec.SecretName, secret, tt.mountDir)
			}
			if tt.cert.Namespace != in.manager.Namespace {
				t.Errorf("Certificate in namespace %q, manager in %q", tt.cert.Namespace, in.manager.Namespace)
			}
			ref := tt.cert.Spec.IssuerRef
			if ref.Kind != "Issuer" || in.issuers[tt.cert.Namespace+"/"+ref.Name] == nil {
				t.Errorf("Certificate %s names %s %q, which config/default does not create", tt.cert.Name, ref.Kind, ref.Name)
			}
		})
	}

	// The webhook Service reaches the manager's webhook port.
	var port int32
	for _, c := range in.manager.Spec.Template.Spec.Containers {
		for _, p := range c.Ports {
			if p.Name == "webhook-server" {
				port = p.ContainerPort
			}
		}
	}
	if len(webhookService.Spec.Ports) != 1 || webhookService.Spec.Ports[0].TargetPort.IntValue() != int(port) {
		t.Errorf("webhook Service ports %v do not target the manager's webhook-server port %d", webhookService.Spec.Ports, port)
	}
}
