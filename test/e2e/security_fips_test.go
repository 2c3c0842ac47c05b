package e2e

import (
	"context"
	"crypto/tls"
	"net/http"
	"os"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/example-inc/memcached-operator/api/v1/gen"
	"github.com/example-inc/memcached-operator/certs/certstest"
	"github.com/example-inc/memcached-operator/hack/local-cluster/fipsbuild"
	"github.com/example-inc/memcached-operator/hack/repo"
	"github.com/example-inc/memcached-operator/test/framework/operatorproc"
)

// fipsCurves are the key exchanges FIPS 140-3 mode lets crypto/tls
// negotiate that a client offering x25519First can get: X25519 is not
// among them.
var fipsCurves = []tls.CurveID{tls.CurveP256, tls.CurveP384}

// x25519First offers X25519 before P-256 and P-384: a server outside FIPS
// 140-3 mode takes X25519, as Go prefers it.
var x25519First = certstest.Offer{Curves: []tls.CurveID{tls.X25519, tls.CurveP256, tls.CurveP384}}

// The operator, built as make build builds it (with the Go Cryptographic
// Module GOFIPS140), with GODEBUG=fips140=only, where Go's cryptography
// returns an error or panics on any algorithm FIPS 140-3 does not approve,
// goes through every path of it that uses cryptography: the API server
// calls its admission webhooks over TLS (a bad Memcached refused, a good
// one defaulted and admitted), it reconciles that one into a Deployment
// over its TLS connection to the API server, wins leader election, and
// serves /metrics over HTTPS to a scraper with a ServiceAccount token.
// Both servers pick an approved key exchange over the X25519 a client
// prefers, and the operator logs no refusal of the module and exits
// cleanly.
var _ = Describe("the operator under GODEBUG=fips140=only", Ordered, Label(labelHost, labelSecurity), func() {
	const ns = "fips"
	var (
		op      *operatorproc.Operator
		logPath string
	)
	BeforeAll(func(ctx SpecContext) {
		Expect(fipsbuild.Check(operatorBinary)).To(Succeed())
		cluster.restrictedNamespace(ctx, ns)
		logPath = filepath.Join(workDir, "fips-operator.log")
		var err error
		op, err = operatorproc.Start(ctx, operatorproc.Options{
			Binary: operatorBinary, Kubeconfig: cluster.KubeconfigPath(), LogPath: logPath,
			Webhooks: operatorproc.WebhooksLocal, WebhookCertDir: filepath.Join(workDir, "fips-webhook-certs"),
			SecureMetrics: true, LeaderElectionNamespace: ns, WatchNamespace: ns,
			Env: append(relatedImageEnv(), "GODEBUG=fips140=only"),
		})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() error { return op.Stop(45 * time.Second) })
	})

	It("says it runs the module in FIPS 140-3 mode, enforced", func() {
		log, err := os.ReadFile(logPath)
		Expect(err).NotTo(HaveOccurred())
		Expect(string(log)).To(ContainSubstring(`"fips140":true,"fips140Enforced":true,"fips140Module":"` + repo.GoFIPS140() + `"`))
	})

	It("holds the leader election Lease", func(ctx SpecContext) {
		eventually(ctx, func(g Gomega) {
			var lease coordinationv1.Lease
			g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: leaseName}, &lease)).To(Succeed())
			g.Expect(lease.Spec.HolderIdentity).To(HaveValue(Not(BeEmpty())))
		}).Should(Succeed())
	})

	It("answers both admission webhooks and reconciles", func(ctx SpecContext) {
		err := k8s.Create(ctx, gen.Memcached(ns, "too-big", gen.WithSize(17)))
		Expect(err).To(MatchError(ContainSubstring(denied)))
		cache := gen.Memcached(ns, "cache")
		Expect(k8s.Create(ctx, cache)).To(Succeed())
		Expect(cache.Spec.Size).To(HaveValue(BeEquivalentTo(3)), "defaulted by the mutating webhook")
		eventually(ctx, func() error {
			return k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "cache"}, &metav1.PartialObjectMetadata{
				TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"}})
		}).Should(Succeed())
	})

	It("serves /metrics over HTTPS to a ServiceAccount token", func(ctx SpecContext) {
		token := metricsScraperToken(ctx, ns)
		// controller-runtime's self-signed certificate: its key and
		// signature are what FIPS mode judges.
		eventually(ctx, func(g Gomega) {
			code, body, err := getMetrics(ctx, op.MetricsAddr(), token)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(code).To(Equal(http.StatusOK), "body: %.300s", body)
			g.Expect(body).To(ContainSubstring(`controller_runtime_reconcile_total{controller="memcached",result="success"}`))
		}).Should(Succeed())
	})

	It("picks an approved key exchange on both servers", func(ctx SpecContext) {
		for name, addr := range map[string]string{"webhook": op.WebhookAddr(), "metrics": op.MetricsAddr()} {
			for _, max := range []uint16{tls.VersionTLS12, tls.VersionTLS13} {
				offer := x25519First
				offer.MaxVersion = max
				st, err := certstest.Handshake(ctx, addr, offer)
				Expect(err).NotTo(HaveOccurred(), "the %s server refused %s offering X25519, P-256 and P-384", name, tls.VersionName(max))
				Expect(fipsCurves).To(ContainElement(st.CurveID), "the %s server chose %s with %s", name, st.CurveID, tls.VersionName(max))
			}
		}
	})

	It("exits cleanly, having refused nothing of the module", func() {
		Expect(op.Stop(45*time.Second)).To(Succeed(), "the operator's exit")
		log, err := os.ReadFile(logPath)
		Expect(err).NotTo(HaveOccurred())
		// Go's words for what the module refuses under fips140=only, and
		// the start of a panic.
		Expect(string(log)).NotTo(Or(ContainSubstring("FIPS 140-only mode"), ContainSubstring("panic:")))
	})
})

// metricsScraperToken is a token of a ServiceAccount in ns that may GET
// /metrics, as a Prometheus is. The ClusterRole and its binding go when
// the calling container ends.
func metricsScraperToken(ctx context.Context, ns string) string {
	GinkgoHelper()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "scraper"}}
	Expect(k8s.Create(ctx, sa)).To(Succeed())
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: ns + "-metrics-scraper"},
		Rules: []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}}}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: role.Name},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: sa.Name}}}
	for _, o := range []client.Object{role, binding} {
		Expect(k8s.Create(ctx, o)).To(Succeed())
		DeferCleanup(func(ctx SpecContext) { Expect(client.IgnoreNotFound(k8s.Delete(ctx, o))).To(Succeed()) })
	}
	token, err := cluster.local.ServiceAccountToken(ctx, ns, sa.Name)
	Expect(err).NotTo(HaveOccurred())
	return token
}
