package e2e

import (
	"context"
	"crypto/tls"
	"fmt"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	configv1 "github.com/openshift/api/config/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/example-inc/memcached-operator/certs/certstest"
	"github.com/example-inc/memcached-operator/certs/tlsprofile"
	"github.com/example-inc/memcached-operator/hack/repo"
	"github.com/example-inc/memcached-operator/test/framework/operatorproc"
)

// tlsClient is a client that tells profiles apart, by what it offers. Each
// offers suites for both key types: the webhook certificate (local mode)
// is ECDSA, the metrics one (self-signed by controller-runtime) RSA.
type tlsClient struct {
	name  string
	offer certstest.Offer
}

var (
	// tls12Only stops at TLS 1.2, with Go's default suites: Modern refuses it.
	tls12Only = tlsClient{"TLS 1.2 only", certstest.Offer{MaxVersion: tls.VersionTLS12}}
	// tls12CBC offers only CBC suites that Old has, Intermediate not. They
	// are the CBC suites with SHA-256: the operator runs in FIPS 140-3
	// mode (docs/fips.md), where crypto/tls negotiates no suite with SHA-1
	// whatever the profile says.
	tls12CBC = tlsClient{"TLS 1.2, CBC suites only", certstest.Offer{MaxVersion: tls.VersionTLS12,
		CipherSuites: []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256, tls.TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256}}}
	// tls12AES128 offers only the AES-128 GCM suites, outside customTLS's
	// list.
	tls12AES128 = tlsClient{"TLS 1.2, AES-128 GCM only", certstest.Offer{MaxVersion: tls.VersionTLS12,
		CipherSuites: []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256}}}
	tls13 = tlsClient{"TLS 1.3", certstest.Offer{}}
)

// customTLS is a Custom profile; its suites in crypto/tls's terms are
// aes256GCM.
var (
	customTLS = &configv1.TLSSecurityProfile{Type: configv1.TLSProfileCustomType, Custom: &configv1.CustomTLSProfile{
		TLSProfileSpec: configv1.TLSProfileSpec{MinTLSVersion: configv1.VersionTLS12,
			Ciphers: []string{"ECDHE-ECDSA-AES256-GCM-SHA384", "ECDHE-RSA-AES256-GCM-SHA384"}}}}
	aes256GCM = []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384, tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384}
)

// The operator's webhook and metrics servers, in real handshakes: without
// OpenShift's APIServer API they serve Intermediate; with it (its CRD from
// the openshift/api module) they follow the APIServer "cluster"'s profile,
// and a change of it (its deletion too) reaches them without a restart;
// the --tls-* flags win over the profile. The APIServer is cluster-wide,
// so the container runs alone, and removes its CRD when it ends.
var _ = Describe("the operator's servers under the cluster's TLS profile", Ordered, Serial, Label(labelHost, labelSecurity, labelTLS), func() {
	const ns = "tls-profile"
	var (
		config    client.Client
		apiServer *configv1.APIServer
	)
	// start runs an operator with args until stop or the container's end,
	// and returns its webhook and metrics servers' addresses.
	var stop func()
	start := func(ctx context.Context, name string, args ...string) map[string]string {
		GinkgoHelper()
		op, err := operatorproc.Start(ctx, operatorproc.Options{
			Binary: operatorBinary, Kubeconfig: cluster.KubeconfigPath(), LogPath: filepath.Join(workDir, name+".log"),
			Webhooks: operatorproc.WebhooksLocal, WebhookCertDir: filepath.Join(workDir, name+"-webhook-certs"),
			SecureMetrics: true, WatchNamespace: ns, LeaderElectionNamespace: ns, Env: relatedImageEnv(), ExtraArgs: args,
		})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() error { return op.Stop(45 * time.Second) })
		stop = func() { Expect(op.Stop(45 * time.Second)).To(Succeed()) }
		return map[string]string{"webhook": op.WebhookAddr(), "metrics": op.MetricsAddr()}
	}
	setProfile := func(ctx context.Context, p *configv1.TLSSecurityProfile) {
		GinkgoHelper()
		patch := client.MergeFrom(apiServer.DeepCopy())
		apiServer.Spec.TLSSecurityProfile = p
		Expect(config.Patch(ctx, apiServer, patch)).To(Succeed())
	}

	BeforeAll(func(ctx SpecContext) {
		cluster.restrictedNamespace(ctx, ns)
		scheme := runtime.NewScheme()
		Expect(configv1.AddToScheme(scheme)).To(Succeed())
		var err error
		config, err = client.New(cluster.RestConfig(), client.Options{Scheme: scheme})
		Expect(err).NotTo(HaveOccurred())
	})

	It("serves Intermediate without the APIServer API", func(ctx SpecContext) {
		servers := start(ctx, "tls-profile-no-api")
		eventuallyServe(ctx, "no API: Intermediate", servers, []tlsClient{tls12Only, tls13}, []tlsClient{tls12CBC})
		stop()
	})

	It("follows each change of the APIServer's profile, its deletion too, on one running operator", func(ctx SpecContext) {
		crd, err := repo.OpenShiftAPIServerCRD()
		Expect(err).NotTo(HaveOccurred())
		crds, err := envtest.InstallCRDs(cluster.RestConfig(), envtest.CRDInstallOptions{ErrorIfPathMissing: true, Paths: []string{crd}})
		Expect(err).NotTo(HaveOccurred())
		// Gone from discovery too before the next container: an operator
		// that discovers the API while it goes would wait for a watch
		// that cannot start.
		DeferCleanup(func(ctx SpecContext) {
			Expect(envtest.UninstallCRDs(cluster.RestConfig(), envtest.CRDInstallOptions{CRDs: crds})).To(Succeed())
			eventually(ctx, func() (bool, error) { return tlsprofile.Served(cs.Discovery()) }).Should(BeFalse())
		})
		apiServer = &configv1.APIServer{ObjectMeta: metav1.ObjectMeta{Name: "cluster"},
			Spec: configv1.APIServerSpec{TLSSecurityProfile: &configv1.TLSSecurityProfile{Type: configv1.TLSProfileIntermediateType}}}
		Expect(config.Create(ctx, apiServer)).To(Succeed())

		servers := start(ctx, "tls-profile-following")
		eventuallyServe(ctx, "Intermediate", servers, []tlsClient{tls12Only, tls13}, []tlsClient{tls12CBC})
		setProfile(ctx, &configv1.TLSSecurityProfile{Type: configv1.TLSProfileModernType})
		eventuallyServe(ctx, "Modern", servers, []tlsClient{tls13}, []tlsClient{tls12Only, tls12CBC})
		setProfile(ctx, &configv1.TLSSecurityProfile{Type: configv1.TLSProfileOldType})
		eventuallyServe(ctx, "Old", servers, []tlsClient{tls12Only, tls12CBC, tls13}, nil)
		setProfile(ctx, customTLS)
		eventuallyServe(ctx, "Custom", servers, []tlsClient{tls13}, []tlsClient{tls12AES128, tls12CBC})
		expectAES256GCM(ctx, "Custom", servers)
		Expect(config.Delete(ctx, apiServer)).To(Succeed())
		eventuallyServe(ctx, "the APIServer deleted: Intermediate", servers, []tlsClient{tls12Only, tls12AES128}, []tlsClient{tls12CBC})
		stop()

		By("flags win: TLS 1.2 with AES-256 GCM under Modern")
		apiServer = &configv1.APIServer{ObjectMeta: metav1.ObjectMeta{Name: "cluster"},
			Spec: configv1.APIServerSpec{TLSSecurityProfile: &configv1.TLSSecurityProfile{Type: configv1.TLSProfileModernType}}}
		Expect(config.Create(ctx, apiServer)).To(Succeed())
		DeferCleanup(func(ctx SpecContext) { Expect(client.IgnoreNotFound(config.Delete(ctx, apiServer))).To(Succeed()) })
		servers = start(ctx, "tls-profile-flags", "--tls-min-version=VersionTLS12",
			"--tls-cipher-suites=TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384")
		eventuallyServe(ctx, "Modern under the flags", servers, []tlsClient{tls12Only, tls13}, []tlsClient{tls12AES128})
		expectAES256GCM(ctx, "--tls-cipher-suites", servers)
	})
})

// eventuallyServe waits until every server accepts each of accepted and
// refuses each of refused, in new handshakes: a profile change reaches the
// servers through a watch.
func eventuallyServe(ctx context.Context, profile string, servers map[string]string, accepted, refused []tlsClient) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		for name, addr := range servers {
			for _, c := range accepted {
				_, err := certstest.Handshake(ctx, addr, c.offer)
				g.Expect(err).NotTo(HaveOccurred(), "the %s server refused a client offering %s", name, c.name)
			}
			for _, c := range refused {
				st, err := certstest.Handshake(ctx, addr, c.offer)
				g.Expect(err).To(HaveOccurred(), "the %s server accepted a client offering %s, with %s %s",
					name, c.name, tls.VersionName(st.Version), tls.CipherSuiteName(st.CipherSuite))
			}
		}
	}).WithContext(ctx).WithTimeout(30*time.Second).WithPolling(200*time.Millisecond).Should(Succeed(), profile)
}

// expectAES256GCM checks that a TLS 1.2 client offering Go's defaults gets
// an AES-256 GCM suite from every server.
func expectAES256GCM(ctx context.Context, why string, servers map[string]string) {
	GinkgoHelper()
	for name, addr := range servers {
		st, err := certstest.Handshake(ctx, addr, tls12Only.offer)
		Expect(err).NotTo(HaveOccurred(), "%s: the %s server refused a TLS 1.2 client offering Go's defaults", why, name)
		Expect(aes256GCM).To(ContainElement(st.CipherSuite), "%s: the %s server chose %s", why, name, tls.CipherSuiteName(st.CipherSuite))
	}
}

// server is one of the operator's TLS servers.
type server string

const (
	webhookServer server = "webhook"
	metricsServer server = "metrics"
)

func (op *operator) addr(s server) string {
	if s == webhookServer {
		return op.WebhookAddr()
	}
	return op.MetricsAddr()
}

// tlsVersionEntries: every server, every version; 1.2 and newer accepted.
func tlsVersionEntries() []TableEntry {
	versions := []struct {
		name     string
		version  uint16
		accepted bool
	}{
		{"1.0", tls.VersionTLS10, false},
		{"1.1", tls.VersionTLS11, false},
		{"1.2", tls.VersionTLS12, true},
		{"1.3", tls.VersionTLS13, true},
	}
	var out []TableEntry
	for _, s := range []server{webhookServer, metricsServer} {
		for _, v := range versions {
			verdict := "refuses"
			if v.accepted {
				verdict = "accepts"
			}
			out = append(out, Entry(fmt.Sprintf("the %s server %s TLS %s", s, verdict, v.name), s, v.version, v.accepted))
		}
	}
	return out
}

// tlsSpecs are the "TLS" specs of the security container (security_test.go).
func tlsSpecs() {
	Describe("TLS", Ordered, func() {
		// http2 is a second replica with --enable-http2. It waits for the
		// leader election lease the first one holds, so it never reconciles,
		// but like every replica it serves metrics and webhooks; it serves the
		// first one's webhook certificate (mounted mode), so it writes no
		// webhook configuration.
		var http2 *operator

		BeforeAll(func(ctx SpecContext) {
			var err error
			http2, err = startSecurityOperator(ctx, operatorOptions{
				name:           "security-operator-http2",
				webhooks:       operatorproc.WebhooksMounted,
				webhookCertDir: op.Options().WebhookCertDir,
				args:           []string{"--enable-http2"},
			})
			Expect(err).NotTo(HaveOccurred())
			DeferCleanup(http2.stop)
		}, NodeTimeout(readyTimeout+time.Minute))

		DescribeTable("versions",
			func(ctx SpecContext, s server, version uint16, accepted bool) {
				state, err := certstest.Handshake(ctx, op.addr(s), certstest.Offer{MinVersion: version, MaxVersion: version})
				if accepted {
					Expect(err).NotTo(HaveOccurred())
					Expect(state.Version).To(Equal(version))
					AddReportEntry(fmt.Sprintf("%s %s", s, tls.VersionName(version)), "accepted")
					return
				}
				Expect(err).To(MatchError(ContainSubstring("protocol version")))
				AddReportEntry(fmt.Sprintf("%s %s", s, tls.VersionName(version)), "refused: "+err.Error())
			},
			tlsVersionEntries(),
		)

		DescribeTable("HTTP/2",
			func(ctx SpecContext, withHTTP2 bool, s server, want string) {
				o := op
				if withHTTP2 {
					o = http2
				}
				// A client that prefers h2, as Go's and most others do.
				state, err := certstest.Handshake(ctx, o.addr(s),
					certstest.Offer{MinVersion: tls.VersionTLS13, NextProtos: []string{"h2", "http/1.1"}})
				Expect(err).NotTo(HaveOccurred())
				Expect(state.NegotiatedProtocol).To(Equal(want))
			},
			Entry("is off on the webhook server by default: http/1.1 is negotiated", false, webhookServer, "http/1.1"),
			Entry("is off on the metrics server by default: http/1.1 is negotiated", false, metricsServer, "http/1.1"),
			Entry("is on on the webhook server with --enable-http2", true, webhookServer, "h2"),
			Entry("is on on the metrics server with --enable-http2", true, metricsServer, "h2"),
		)
	})
}
