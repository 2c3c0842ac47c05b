package e2e

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	cmapi "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
	"github.com/example-inc/memcached-operator/api/v1/gen"
	"github.com/example-inc/memcached-operator/certs/certstest"
	"github.com/example-inc/memcached-operator/hack/local-cluster/images"
	"github.com/example-inc/memcached-operator/hack/local-cluster/localcluster"
	"github.com/example-inc/memcached-operator/hack/repo"
	"github.com/example-inc/memcached-operator/test/framework/memcache"
	"github.com/example-inc/memcached-operator/test/framework/operatorproc"
	"github.com/example-inc/memcached-operator/test/framework/scrape"
)

var _ = Describe("memcached over TLS on the real node", Ordered, Label(labelHost, labelNode, labelTLS), func() {
	const (
		ns         = "tls"
		secretName = "cache-tls"
		// serverName is the headless Service's name, which the certificate
		// covers with the pods' wildcard; clients dial pod IPs and verify
		// the chain against this name (the cluster has no DNS).
		serverName = "cache.tls.svc"
	)
	var (
		c     *realCluster
		op    *operatorproc.Operator
		ca    *certstest.CA
		cache *cachev1.Memcached
	)

	issue := func(o certstest.CertOptions) certstest.Cert {
		GinkgoHelper()
		cert, err := ca.Issue(o)
		Expect(err).NotTo(HaveOccurred())
		return cert
	}
	serverCert := func() certstest.Cert {
		return issue(certstest.CertOptions{DNSNames: []string{serverName, "*." + serverName}})
	}
	// dial opens a TLS connection to pod's memcached that verifies the
	// chain and the name, presenting client certificates when given.
	dial := func(ctx context.Context, pod corev1.Pod, clientCerts ...tls.Certificate) (*memcache.Client, error) {
		return memcache.DialTLS(ctx, pod.Status.PodIP+":11211", &tls.Config{
			RootCAs: ca.Pool(), ServerName: serverName, Certificates: clientCerts, MinVersion: tls.VersionTLS12})
	}

	// expiring reads the Memcached's CertificateExpiring condition.
	expiring := func(ctx context.Context) func(Gomega) metav1.Condition {
		return func(g Gomega) metav1.Condition {
			mc := &cachev1.Memcached{}
			g.Expect(c.k8s.Get(ctx, client.ObjectKeyFromObject(cache), mc)).To(Succeed())
			cond := meta.FindStatusCondition(mc.Status.Conditions, cachev1.ConditionCertificateExpiring)
			g.Expect(cond).NotTo(BeNil(), "the CertificateExpiring condition")
			return *cond
		}
	}
	// series reads the operator's metric for each pod, by pod.
	series := func(ctx context.Context) func(Gomega) map[string]float64 {
		return func(g Gomega) map[string]float64 {
			text, err := op.Metrics(ctx)
			g.Expect(err).NotTo(HaveOccurred())
			m, err := scrape.Parse(text)
			g.Expect(err).NotTo(HaveOccurred())
			out := map[string]float64{}
			for s := range m.Series("memcached_operator_served_certificate_expiring_timestamp_seconds", map[string]string{"namespace": ns, "name": cache.Name}) {
				for _, l := range s.GetLabel() {
					if l.GetName() == "pod" {
						out[l.GetValue()] = scrape.Value(s)
					}
				}
			}
			return out
		}
	}

	// renewsInPlace sets items in each of mc's pods through a connection
	// dial opens, renews the certificate (renew returns the new serial),
	// waits until every pod serves it, and checks the items through the
	// connections opened before, the same pods and no container restarted.
	renewsInPlace := func(ctx context.Context, mc *cachev1.Memcached, pods []corev1.Pod,
		dial func(context.Context, corev1.Pod, ...tls.Certificate) (*memcache.Client, error), renew func() *big.Int) {
		GinkgoHelper()
		clients := map[string]*memcache.Client{}
		for _, p := range pods {
			m, err := dial(ctx, p)
			Expect(err).NotTo(HaveOccurred())
			DeferCleanup(func() { _ = m.Close() })
			clients[p.Name] = m
			for i := range 100 {
				Expect(m.Set(fmt.Sprintf("item-%d", i), []byte(p.Name))).To(Succeed())
			}
		}
		old := clients[pods[0].Name].PeerCertificate().SerialNumber

		// The kubelet refreshes the pod's Secret volume at its next sync of
		// the pod; the watch, the sidecar's 2 s reading and the refresh take
		// seconds more. With the kubelet's default minute this is 110 s,
		// within the two minutes the API promises.
		bound := localcluster.KubeletSyncFrequency*3/2 + 20*time.Second
		start := time.Now()
		serial := renew()
		Expect(serial.Cmp(old)).NotTo(BeZero())
		served := map[string]time.Duration{}
		Eventually(func(g Gomega) {
			for _, p := range pods {
				if _, ok := served[p.Name]; ok {
					continue
				}
				m, err := dial(ctx, p)
				g.Expect(err).NotTo(HaveOccurred())
				if m.PeerCertificate().SerialNumber.Cmp(serial) == 0 {
					served[p.Name] = time.Since(start)
				}
				_ = m.Close()
			}
			g.Expect(served).To(HaveLen(len(pods)), "pods serving the renewed certificate")
		}).WithContext(ctx).WithTimeout(bound).WithPolling(time.Second).Should(Succeed())
		var last time.Duration
		for _, d := range served {
			last = max(last, d)
		}
		AddReportEntry(mc.Name+": renewal to the last pod serving the new certificate", last.Round(time.Second).String())

		for _, p := range pods {
			m := clients[p.Name]
			for i := range 100 {
				Expect(m.Get(fmt.Sprintf("item-%d", i))).To(Equal([]byte(p.Name)),
					"pod %s: item %d, through the connection opened before the renewal", p.Name, i)
			}
		}
		c.expectSamePods(ctx, mc, pods)
	}

	BeforeAll(func(ctx SpecContext) {
		c = cluster
		// Rounds of the served-certificate watcher every 2 s, not 10 min.
		op = c.operatorIn(ctx, "tls-operator", ns, "SERVED_CERTIFICATE_INTERVAL=2s")
		var err error
		ca, err = certstest.NewCA("memcached TLS test CA")
		Expect(err).NotTo(HaveOccurred())
	}, NodeTimeout(5*time.Minute))

	tailOnFailure(&op)

	It("serves set/get to a client that verifies the chain, refuses plain text and TLS 1.1, and keeps the key at 0440", func(ctx SpecContext) {
		c.writeTLSSecret(ctx, ns, secretName, serverCert(), ca.PEM)
		cache = gen.Memcached(ns, "cache", gen.WithSize(2), gen.WithTLS(secretName))
		start := time.Now()
		Expect(c.k8s.Create(ctx, cache)).To(Succeed())
		pods := c.serving(ctx, cache, 2, memcachedA.Ref)
		AddReportEntry("TLS size 2 serving", time.Since(start).Round(time.Millisecond).String())
		for _, p := range pods {
			m, err := dial(ctx, p)
			Expect(err).NotTo(HaveOccurred(), "pod %s: TLS handshake verifying the chain and %s", p.Name, serverName)
			Expect(m.Set("tls", []byte("over TLS"))).To(Succeed(), "pod %s", p.Name)
			Expect(m.Get("tls")).To(Equal([]byte("over TLS")), "pod %s", p.Name)
			Expect(m.Close()).To(Succeed())

			By("speaking plain text to " + p.Name)
			plain, err := memcache.Dial(ctx, p.Status.PodIP+":11211")
			Expect(err).NotTo(HaveOccurred())
			_, err = plain.Get("tls")
			Expect(err).To(HaveOccurred(), "pod %s answered a plain-text get on its TLS port", p.Name)
			_ = plain.Close()

			By("offering only TLS 1.1 to " + p.Name)
			_, err = memcache.DialTLS(ctx, p.Status.PodIP+":11211", &tls.Config{RootCAs: ca.Pool(), ServerName: serverName,
				MinVersion: tls.VersionTLS10, MaxVersion: tls.VersionTLS11})
			Expect(err).To(MatchError(ContainSubstring("protocol version")), "pod %s", p.Name)

			By("reading the key's mode as memcached sees it")
			key, err := os.Stat(fmt.Sprintf("/proc/%d/root/etc/memcached/tls/tls.key", c.memcachedPID(ctx, p)))
			Expect(err).NotTo(HaveOccurred())
			Expect(key.Mode().Perm()).To(Equal(os.FileMode(0o440)), "pod %s", p.Name)
			Expect(key.Sys().(*syscall.Stat_t).Gid).To(BeEquivalentTo(images.MemcachedUID), "pod %s: memcached's group reads it", p.Name)
		}
	}, SpecTimeout(4*time.Minute))

	It("keeps a pod in clients' server list while its TLS sidecar is stopped and the pod is not ready", func(ctx SpecContext) {
		pods := c.serving(ctx, cache, 2, memcachedA.Ref)
		victim := pods[0]
		readyPods, servers := c.watchServing(ctx, cache, 2)

		By("killing the TLS sidecar of " + victim.Name + ": memcached's readiness goes through it")
		Expect(syscall.Kill(c.containerPID(ctx, victim, "tls-reloader"), syscall.SIGKILL)).To(Succeed())
		eventually(ctx, readyPods.min).Should(Equal(1), "the pod went unready")
		for _, p := range c.serving(ctx, cache, 2, memcachedA.Ref) {
			if p.UID == victim.UID {
				Expect(restartSummary(p)).NotTo(Equal(restartSummary(victim)), "pod %s: the sidecar restarted", p.Name)
			}
		}
		Expect(servers.last()).To(ContainElement(victim.Status.PodIP), "the Service's addresses")
		Expect(servers.changes()).To(BeEmpty(), "changes of the Service's addresses while the pod was not ready")
	}, SpecTimeout(2*time.Minute))

	It("reports a served certificate near its end on the Memcached and in the operator's metrics, restarting nothing", func(ctx SpecContext) {
		pods := c.serving(ctx, cache, 2, memcachedA.Ref)
		Eventually(expiring(ctx)).WithContext(ctx).WithTimeout(time.Minute).Should(And(
			HaveField("Status", metav1.ConditionFalse), HaveField("Reason", cachev1.ReasonCertificatesValid)))
		Expect(series(ctx)(Default)).To(BeEmpty())

		By("writing a certificate that ends in an hour, issued ten hours ago")
		now := time.Now()
		ending := issue(certstest.CertOptions{DNSNames: []string{serverName, "*." + serverName}, NotBefore: now.Add(-10 * time.Hour), NotAfter: now.Add(time.Hour)})
		c.writeTLSSecret(ctx, ns, secretName, ending, ca.PEM)
		end := ending.NotAfter.UTC().Truncate(time.Second)
		Eventually(expiring(ctx)).WithContext(ctx).WithTimeout(3 * time.Minute).Should(And(
			HaveField("Status", metav1.ConditionTrue), HaveField("Reason", cachev1.ReasonCertificateNearExpiry),
			HaveField("Message", MatchRegexp(`^pod %s-[a-z0-9-]+ serves a certificate that ends at %s`, cache.Name, end.Format(time.RFC3339)))))
		Eventually(series(ctx)).WithContext(ctx).WithTimeout(3*time.Minute).Should(Equal(map[string]float64{
			pods[0].Name: float64(end.Unix()), pods[1].Name: float64(end.Unix()),
		}), "every pod's series, valued at the certificate's end")
		c.expectSamePods(ctx, cache, pods)
	}, SpecTimeout(5*time.Minute))

	It("serves a renewed certificate from every pod at the kubelet's next sync, restarting nothing and losing nothing, and clears CertificateExpiring", func(ctx SpecContext) {
		pods := c.serving(ctx, cache, 2, memcachedA.Ref)
		renewsInPlace(ctx, cache, pods, dial, func() *big.Int {
			renewed := serverCert()
			c.writeTLSSecret(ctx, ns, secretName, renewed, ca.PEM)
			return renewed.Serial
		})
		By("clearing what the certificate near its end set")
		Eventually(expiring(ctx)).WithContext(ctx).WithTimeout(time.Minute).Should(HaveField("Reason", cachev1.ReasonCertificatesValid))
		Eventually(series(ctx)).WithContext(ctx).WithTimeout(time.Minute).Should(BeEmpty())
	}, SpecTimeout(4*time.Minute))

	It("with client certificates required, refuses a client without one and serves one the CA signed", func(ctx SpecContext) {
		patch := client.MergeFrom(cache.DeepCopy())
		cache.Spec.TLS.ClientCertificates = cachev1.ClientCertificatesRequired
		Expect(c.k8s.Patch(ctx, cache, patch)).To(Succeed())
		var pods []corev1.Pod
		eventually(ctx, func(g Gomega) {
			pods = c.serving(ctx, cache, 2, memcachedA.Ref)
			for _, p := range pods {
				g.Expect(strings.Join(p.Spec.Containers[0].Command, " ")).To(ContainSubstring("ssl_verify_mode=2"), "pod %s", p.Name)
			}
		}).Should(Succeed())
		clientCert, err := issue(certstest.CertOptions{DNSNames: []string{"client"}, Client: true}).TLSCertificate()
		Expect(err).NotTo(HaveOccurred())
		for _, p := range pods {
			m, err := dial(ctx, p)
			if err == nil {
				// TLS 1.3: the refusal arrives with the first request. A
				// set, as a get's "not found" would pass for a refusal.
				err = m.Set("no-certificate", []byte("refused"))
				_ = m.Close()
			}
			Expect(err).To(HaveOccurred(), "pod %s served a client without a certificate", p.Name)

			m, err = dial(ctx, p, clientCert)
			Expect(err).NotTo(HaveOccurred(), "pod %s", p.Name)
			Expect(m.Set("mtls", []byte("ok"))).To(Succeed(), "pod %s", p.Name)
			Expect(m.Get("mtls")).To(Equal([]byte("ok")), "pod %s", p.Name)
			_ = m.Close()
		}
	}, SpecTimeout(4*time.Minute))

	It("reports a missing Secret, a key of another certificate and an expired certificate on the Memcached, and recovers", func(ctx SpecContext) {
		other := serverCert()
		mismatched := serverCert()
		mismatched.KeyPEM = other.KeyPEM
		c.writeTLSSecret(ctx, ns, "mismatched", mismatched, ca.PEM)
		c.writeTLSSecret(ctx, ns, "expired", issue(certstest.CertOptions{DNSNames: []string{serverName},
			NotBefore: time.Now().Add(-48 * time.Hour), NotAfter: time.Now().Add(-24 * time.Hour)}), ca.PEM)
		cases := []struct{ secret, message string }{
			{"absent", `Secret "absent" does not exist or holds no keys: it needs tls.crt and tls.key`},
			{"mismatched", `Secret "mismatched": tls.key does not match the certificate in tls.crt`},
			{"expired", `Secret "expired": the certificate in tls.crt expired at`},
		}
		broken := map[string]*cachev1.Memcached{}
		for _, tc := range cases {
			mc := gen.Memcached(ns, "bad-"+tc.secret, gen.WithSize(1), gen.WithTLS(tc.secret))
			Expect(c.k8s.Create(ctx, mc)).To(Succeed())
			DeferCleanup(c.deleteMemcached, mc, NodeTimeout(2*time.Minute))
			broken[tc.secret] = mc
		}
		for _, tc := range cases {
			eventually(ctx, func(g Gomega) {
				got := &cachev1.Memcached{}
				g.Expect(c.k8s.Get(ctx, client.ObjectKeyFromObject(broken[tc.secret]), got)).To(Succeed())
				g.Expect(got.Status.Conditions).To(ContainElement(And(
					HaveField("Type", cachev1.ConditionDegraded), HaveField("Status", metav1.ConditionTrue),
					HaveField("Reason", cachev1.ReasonTLSSecretInvalid),
					HaveField("Message", And(HavePrefix(tc.message), MatchRegexp(`\(pod bad-%s-[-a-z0-9]+\)$`, tc.secret))))))
			}).Should(Succeed())
			if tc.secret == "absent" {
				// At once, while the kubelet's back-off between checks is
				// still short (it doubles from 10 s up to 5 minutes).
				By("creating the absent Secret")
				c.writeTLSSecret(ctx, ns, "absent", serverCert(), ca.PEM)
			}
		}

		By("waiting for the absent Secret's pod to pass its next check and serve, with nothing changed on the Memcached")
		recovered := broken["absent"]
		generation := recovered.Generation
		pods := c.serving(ctx, recovered, 1, memcachedA.Ref)
		m, err := dial(ctx, pods[0])
		Expect(err).NotTo(HaveOccurred())
		Expect(m.Set("recovered", []byte("yes"))).To(Succeed())
		_ = m.Close()
		got := &cachev1.Memcached{}
		Expect(c.k8s.Get(ctx, client.ObjectKeyFromObject(recovered), got)).To(Succeed())
		Expect(got.Generation).To(Equal(generation))
	}, SpecTimeout(5*time.Minute))

	It("has cert-manager issue the certificate of spec.tls.issuerRef, as docs/tls/cert-manager.yaml asks, and serves its renewal in place", func(ctx SpecContext) {
		const issuer = "memcached-ca"
		createCAIssuer(ctx, ns, issuer)
		By("applying docs/tls/cert-manager.yaml with envsubst's substitutions and kubectl, as docs/tls.md says")
		mc := gen.Memcached(ns, "issued")
		Expect(kubectl(ctx, documentedManifest("docs/tls/cert-manager.yaml", map[string]string{
			"NAME": mc.Name, "NAMESPACE": ns, "ISSUER": issuer}), "apply", "-f", "-")).Error().NotTo(HaveOccurred())
		DeferCleanup(c.deleteMemcached, mc, NodeTimeout(2*time.Minute))
		eventually(ctx, func(g Gomega) {
			g.Expect(c.k8s.Get(ctx, client.ObjectKeyFromObject(mc), mc)).To(Succeed())
			g.Expect(meta.FindStatusCondition(mc.Status.Conditions, cachev1.ConditionCertificateReady)).To(
				HaveField("Reason", cachev1.ReasonCertificateIssued))
		}).Should(Succeed())
		cert := &cmapi.Certificate{}
		Expect(c.k8s.Get(ctx, client.ObjectKeyFromObject(mc), cert)).To(Succeed())
		Expect(metav1.IsControlledBy(cert, mc)).To(BeTrue(), "the Memcached's own Certificate")
		pods := c.serving(ctx, mc, 2, memcachedA.Ref)

		By("verifying each pod for the Service's name and its record under it, from the CA in the Secret's ca.crt")
		secret := getSecret(ctx, ns, mc.Spec.TLS.SecretName)
		_, caCert := parseSecret(secret)
		roots := x509.NewCertPool()
		roots.AddCert(caCert)
		dialRecord := func(ctx context.Context, p corev1.Pod, _ ...tls.Certificate) (*memcache.Client, error) {
			record := strings.ReplaceAll(p.Status.PodIP, ".", "-") + "." + mc.Name + "." + ns + ".svc"
			return memcache.DialTLS(ctx, p.Status.PodIP+":11211", &tls.Config{RootCAs: roots, ServerName: record, MinVersion: tls.VersionTLS12})
		}
		for _, p := range pods {
			m, err := memcache.DialTLS(ctx, p.Status.PodIP+":11211", &tls.Config{RootCAs: roots, ServerName: mc.Name + "." + ns + ".svc",
				MinVersion: tls.VersionTLS12})
			Expect(err).NotTo(HaveOccurred(), "pod %s, verified for the Service's name", p.Name)
			_ = m.Close()
		}
		renewsInPlace(ctx, mc, pods, dialRecord, func() *big.Int {
			_, renewed := renewCertificate(ctx, cert)
			return secretSerial(renewed)
		})

		By("removing issuerRef: the Certificate goes; the Secret and the pods stay")
		Expect(c.k8s.Patch(ctx, mc, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"tls":{"issuerRef":null}}}`)))).To(Succeed())
		eventually(ctx, func(g Gomega) {
			g.Expect(c.k8s.Get(ctx, client.ObjectKeyFromObject(mc), &cmapi.Certificate{})).To(Satisfy(apierrors.IsNotFound))
		}).Should(Succeed())
		Expect(getSecret(ctx, ns, mc.Spec.TLS.SecretName).UID).To(Equal(secret.UID))
		for i, p := range c.serving(ctx, mc, 2, memcachedA.Ref) {
			Expect(p.UID).To(Equal(pods[i].UID), "the same pod")
		}
	}, SpecTimeout(5*time.Minute))
})

// restartSummary is every container's name and restart count, init
// containers included.
func restartSummary(p corev1.Pod) string {
	var parts []string
	for _, s := range append(p.Status.InitContainerStatuses, p.Status.ContainerStatuses...) {
		parts = append(parts, fmt.Sprintf("%s=%d", s.Name, s.RestartCount))
	}
	return strings.Join(parts, ",")
}

// expectSamePods checks that mc serves from pods still: not one replaced,
// no container of theirs restarted.
func (c *realCluster) expectSamePods(ctx context.Context, mc *cachev1.Memcached, pods []corev1.Pod) {
	GinkgoHelper()
	for i, p := range c.serving(ctx, mc, len(pods), memcachedA.Ref) {
		Expect(p.UID).To(Equal(pods[i].UID), "pod %s: the same pod", p.Name)
		Expect(restartSummary(p)).To(Equal(restartSummary(pods[i])), "pod %s: no container restarted", p.Name)
	}
}

// tlsSecretFor issues, from a new CA, the certificate of Memcached name in
// ns: for its headless Service's name, which clients verify, and its pods'
// names under it. It writes it to the Secret <name>-tls (writeTLSSecret)
// and returns the CA and the Service's name.
func (c *realCluster) tlsSecretFor(ctx context.Context, ns, name string) (*certstest.CA, string) {
	GinkgoHelper()
	ca, err := certstest.NewCA(name + " test CA")
	Expect(err).NotTo(HaveOccurred())
	serverName := name + "." + ns + ".svc"
	cert, err := ca.Issue(certstest.CertOptions{DNSNames: []string{serverName, "*." + serverName}})
	Expect(err).NotTo(HaveOccurred())
	c.writeTLSSecret(ctx, ns, name+"-tls", cert, ca.PEM)
	return ca, serverName
}

// writeTLSSecret creates or replaces the kubernetes.io/tls Secret name in
// ns, holding cert and the CA's certificate.
func (c *realCluster) writeTLSSecret(ctx context.Context, ns, name string, cert certstest.Cert, caPEM []byte) {
	GinkgoHelper()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Type: corev1.SecretTypeTLS}
	_, err := controllerutil.CreateOrUpdate(ctx, c.k8s, s, func() error {
		s.Data = map[string][]byte{"tls.crt": cert.CertPEM, "tls.key": cert.KeyPEM, "ca.crt": caPEM}
		return nil
	})
	Expect(err).NotTo(HaveOccurred())
}

// documentedManifest is the file at path in the repository with its
// variables replaced, as envsubst does; a variable vars lacks fails the
// test, where envsubst would leave it empty.
func documentedManifest(path string, vars map[string]string) []byte {
	GinkgoHelper()
	data, err := os.ReadFile(filepath.Join(repo.Root(), path))
	Expect(err).NotTo(HaveOccurred())
	return []byte(os.Expand(string(data), func(v string) string {
		value, ok := vars[v]
		Expect(ok).To(BeTrue(), "%s uses $%s, which the docs do not set", path, v)
		return value
	}))
}
