package e2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	cmapi "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	cmmeta "github.com/cert-manager/cert-manager/pkg/apis/meta/v1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
	"github.com/example-inc/memcached-operator/certs"
	"github.com/example-inc/memcached-operator/test/framework/repo"
)

// memcachedTLSNamespace holds memcachedTLSSpecs' objects.
const memcachedTLSNamespace = "memcached-tls"

// memcachedTLSSpecs are a Memcached serving TLS with the certificate
// docs/tls/certificate.yaml has cert-manager issue, applied as docs/tls.md
// tells users to, and a renewal by cert-manager that leaves the pods alone.
// They run in webhook_certs_test.go's ordered container, with the operator
// it started; operatorRunning says whether it runs.
//
// What this proves is the operator's and cert-manager's part: the Secret
// the pods mount, and that a renewal changes nothing in the Deployment or
// its pods. node_tls_test.go proves the serving and the reload in place.
func memcachedTLSSpecs(operatorRunning func() bool) {
	const (
		namespace = memcachedTLSNamespace
		name      = "cache"
		issuer    = "memcached-ca"
	)
	var (
		cert *cmapi.Certificate
		mc   *cachev1.Memcached
	)

	It("issues the documented Certificate; its Secret covers the Service and each pod's record", func(ctx SpecContext) {
		Expect(operatorRunning()).To(BeTrue(), "needs the operator started above")
		Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}})).To(Succeed())
		createCAIssuer(ctx, namespace, issuer)

		By("applying docs/tls/certificate.yaml with envsubst's substitutions and kubectl, as docs/tls.md says")
		manifest := documentedTLSManifest(map[string]string{"NAME": name, "NAMESPACE": namespace, "ISSUER": issuer})
		cert, mc = decodeDocumentedTLS(manifest)
		Expect(cert.Spec.IssuerRef.Name).To(Equal(issuer))
		Expect(mc.Spec.TLS).NotTo(BeNil())
		Expect(mc.Spec.TLS.SecretName).To(Equal(cert.Spec.SecretName), "the Memcached mounts the Secret the Certificate writes")
		start := time.Now()
		Expect(kubectl(ctx, manifest, "apply", "-f", "-")).Error().NotTo(HaveOccurred())

		By("waiting for the Certificate to be Ready")
		expectCertificateReady(ctx, cert)
		AddReportEntry("Memcached's Certificate Ready after kubectl apply", time.Since(start).Round(time.Millisecond))

		By("checking the Secret: tls.crt, tls.key that matches it, ca.crt")
		secret := getSecret(ctx, namespace, cert.Spec.SecretName)
		for _, key := range []string{certs.CertFile, certs.KeyFile, certs.CAFile} {
			Expect(secret.Data).To(HaveKeyWithValue(key, Not(BeEmpty())), "Secret %s", secret.Name)
		}
		Expect(tls.X509KeyPair(secret.Data[certs.CertFile], secret.Data[certs.KeyFile])).Error().NotTo(HaveOccurred())

		By("waiting for the Memcached to be Available, its pods serving on the real node")
		Eventually(func(g Gomega) {
			got := &cachev1.Memcached{}
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(mc), got)).To(Succeed())
			g.Expect(apimeta.IsStatusConditionTrue(got.Status.Conditions, cachev1.ConditionAvailable)).To(BeTrue(), "conditions: %+v", got.Status.Conditions)
			g.Expect(apimeta.IsStatusConditionFalse(got.Status.Conditions, cachev1.ConditionDegraded)).To(BeTrue(), "conditions: %+v", got.Status.Conditions)
		}).WithContext(ctx).WithTimeout(60 * time.Second).Should(Succeed())
		deployment, pods := memcachedPods(ctx, mc)
		Expect(deployment.Spec.Template.Spec.Volumes).To(ContainElement(HaveField("Secret.SecretName", cert.Spec.SecretName)))

		By("checking the certificate verifies, from its CA, for the Service's names and each pod's record under it")
		svc := &corev1.Service{}
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(mc), svc)).To(Succeed())
		Expect(svc.Spec.ClusterIP).To(Equal(corev1.ClusterIPNone), "the pods' records need a headless Service")
		Expect(pods).NotTo(BeEmpty())
		verifyCovers(secret, memcachedDNSNames(svc, pods))
	}, SpecTimeout(3*time.Minute))

	It("renews through cert-manager with no restart, no rollout, and the Memcached Available", func(ctx SpecContext) {
		Expect(cert).NotTo(BeNil(), "needs the previous spec")
		Expect(operatorRunning()).To(BeTrue(), "needs the operator started above")
		before, podsBefore := memcachedPods(ctx, mc)

		_, renewed := renewCertificate(ctx, cert)
		svc := &corev1.Service{}
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(mc), svc)).To(Succeed())
		verifyCovers(renewed, memcachedDNSNames(svc, podsBefore))

		// A change of the Memcached makes the operator reconcile after the
		// renewal, so that an operator that would roll the pods on a new
		// Secret (a hash of it in the pod template) shows it here, whether
		// or not it watches Secrets.
		By("having the operator reconcile the Memcached after the renewal")
		Expect(k8s.Patch(ctx, mc, client.RawPatch(types.MergePatchType,
			[]byte(`{"metadata":{"annotations":{"e2e.example.com/after-renewal":"`+time.Now().UTC().Format(time.RFC3339Nano)+`"}}}`)))).To(Succeed())

		By("checking nothing moves: the Deployment's generation and pod template, the pods and their restarts, the conditions")
		uids, restarts := podUIDs(podsBefore), restartCounts(podsBefore)
		Consistently(func(g Gomega) {
			d := &appsv1.Deployment{}
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(before), d)).To(Succeed())
			g.Expect(d.Generation).To(Equal(before.Generation), "a new generation is a rollout")
			g.Expect(d.Spec.Template).To(Equal(before.Spec.Template))
			var pods corev1.PodList
			g.Expect(k8s.List(ctx, &pods, client.InNamespace(d.Namespace), client.MatchingLabels(d.Spec.Selector.MatchLabels))).To(Succeed())
			g.Expect(podUIDs(pods.Items)).To(Equal(uids), "the same pods, none replaced")
			// Counted from before the renewal: the pods started with the
			// Certificate, and the check before memcached may have run
			// once before cert-manager filled the Secret.
			g.Expect(restartCounts(pods.Items)).To(Equal(restarts), "no container restarted")
			got := &cachev1.Memcached{}
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(mc), got)).To(Succeed())
			g.Expect(apimeta.IsStatusConditionTrue(got.Status.Conditions, cachev1.ConditionAvailable)).To(BeTrue(), "conditions: %+v", got.Status.Conditions)
			g.Expect(apimeta.IsStatusConditionFalse(got.Status.Conditions, cachev1.ConditionDegraded)).To(BeTrue(), "conditions: %+v", got.Status.Conditions)
		}).WithContext(ctx).WithTimeout(5 * time.Second).WithPolling(250 * time.Millisecond).Should(Succeed())
	}, SpecTimeout(2*time.Minute))
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

// documentedTLSManifest is docs/tls/certificate.yaml with its variables
// replaced, as envsubst does; a variable vars lacks fails the test, where
// envsubst would leave it empty.
func documentedTLSManifest(vars map[string]string) []byte {
	GinkgoHelper()
	data, err := os.ReadFile(filepath.Join(repo.Root(), "docs", "tls", "certificate.yaml"))
	Expect(err).NotTo(HaveOccurred())
	return []byte(os.Expand(string(data), func(v string) string {
		value, ok := vars[v]
		Expect(ok).To(BeTrue(), "docs/tls/certificate.yaml uses $%s, which docs/tls.md does not set", v)
		return value
	}))
}

// decodeDocumentedTLS returns the Certificate and the Memcached of the
// documented manifest, failing on anything else in it.
func decodeDocumentedTLS(manifest []byte) (*cmapi.Certificate, *cachev1.Memcached) {
	GinkgoHelper()
	var (
		cert *cmapi.Certificate
		mc   *cachev1.Memcached
	)
	decoder := serializer.NewCodecFactory(k8s.Scheme()).UniversalDeserializer()
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(manifest)))
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		Expect(err).NotTo(HaveOccurred())
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		obj, gvk, err := decoder.Decode(doc, nil, nil)
		Expect(err).NotTo(HaveOccurred())
		switch o := obj.(type) {
		case *cmapi.Certificate:
			Expect(cert).To(BeNil(), "one Certificate")
			cert = o
		case *cachev1.Memcached:
			Expect(mc).To(BeNil(), "one Memcached")
			mc = o
		default:
			Fail("docs/tls/certificate.yaml holds a " + gvk.String())
		}
	}
	Expect(cert).NotTo(BeNil(), "docs/tls/certificate.yaml holds a Certificate")
	Expect(mc).NotTo(BeNil(), "docs/tls/certificate.yaml holds a Memcached")
	return cert, mc
}

// memcachedPods is mc's Deployment and its pods.
func memcachedPods(ctx context.Context, mc *cachev1.Memcached) (*appsv1.Deployment, []corev1.Pod) {
	GinkgoHelper()
	d := &appsv1.Deployment{}
	Expect(k8s.Get(ctx, client.ObjectKeyFromObject(mc), d)).To(Succeed())
	var pods corev1.PodList
	Expect(k8s.List(ctx, &pods, client.InNamespace(d.Namespace), client.MatchingLabels(d.Spec.Selector.MatchLabels))).To(Succeed())
	return d, pods.Items
}

func podUIDs(pods []corev1.Pod) map[string]types.UID {
	uids := map[string]types.UID{}
	for _, p := range pods {
		uids[p.Name] = p.UID
	}
	return uids
}

// restartCounts are the restarts of every container of pods, by pod and
// container name.
func restartCounts(pods []corev1.Pod) map[string]int32 {
	counts := map[string]int32{}
	for _, p := range pods {
		for _, s := range append(p.Status.InitContainerStatuses, p.Status.ContainerStatuses...) {
			counts[p.Name+"/"+s.Name] = s.RestartCount
		}
	}
	return counts
}

// memcachedDNSNames are the names clients reach a Memcached's pods by: the
// headless Service's, and each pod's record under it, named after its IP
// with dashes (or after the pod, where CoreDNS sets endpoint_pod_names).
func memcachedDNSNames(svc *corev1.Service, pods []corev1.Pod) []string {
	GinkgoHelper()
	base := svc.Name + "." + svc.Namespace + ".svc"
	names := []string{base, base + ".cluster.local"}
	for _, p := range pods {
		Expect(p.Status.PodIP).NotTo(BeEmpty(), "pod %s has no IP", p.Name)
		for _, host := range []string{strings.ReplaceAll(p.Status.PodIP, ".", "-"), p.Name} {
			names = append(names, host+"."+base, host+"."+base+".cluster.local")
		}
	}
	return names
}

// verifyCovers checks that the Secret's certificate verifies from its
// ca.crt for each name, as a client that verifies the chain does.
func verifyCovers(secret *corev1.Secret, names []string) {
	GinkgoHelper()
	leaf, ca := parseSecret(secret)
	roots := x509.NewCertPool()
	roots.AddCert(ca)
	// Errors as text: the x509 error values print every byte of the
	// certificate.
	var refused []string
	for _, n := range names {
		if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, DNSName: n}); err != nil {
			refused = append(refused, err.Error())
		}
	}
	Expect(refused).To(BeEmpty())
}
