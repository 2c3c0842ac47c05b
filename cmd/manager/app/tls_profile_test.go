package app

import (
	"context"
	"crypto/tls"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	configv1 "github.com/openshift/api/config/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/example-inc/memcached-operator/certs/certstest"
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

// TestServersFollowClusterTLSProfile runs the operator, built from this
// tree, against a local cluster, and makes real handshakes with its
// webhook and metrics servers: without OpenShift's APIServer API they serve
// Intermediate; with it (its CRD from the openshift/api module) they follow
// the APIServer "cluster"'s profile, and a change of it (its deletion too)
// reaches them without a restart; the --tls-* flags win over the profile.
func TestServersFollowClusterTLSProfile(t *testing.T) {
	g := NewWithT(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	cluster, _ := startLocalCluster(ctx, t, g)
	work := t.TempDir()
	bin, err := operatorproc.Build(ctx, filepath.Join(work, "manager"))
	g.Expect(err).NotTo(HaveOccurred())
	var stop func()
	start := func(name string, args ...string) map[string]string {
		op, err := operatorproc.Start(ctx, operatorproc.Options{
			Binary: bin, Kubeconfig: cluster.KubeconfigPath(), LogPath: filepath.Join(work, name+".log"),
			Webhooks: operatorproc.WebhooksLocal, WebhookCertDir: filepath.Join(work, "webhook-certs"),
			SecureMetrics: true, ExtraArgs: args,
		})
		g.Expect(err).NotTo(HaveOccurred())
		t.Cleanup(func() {
			if t.Failed() {
				t.Log(op.Tail(40))
			}
			_ = op.Stop(45 * time.Second)
		})
		stop = func() { g.Expect(op.Stop(45 * time.Second)).To(Succeed()) }
		return map[string]string{"webhook": op.WebhookAddr(), "metrics": op.MetricsAddr()}
	}

	t.Log("without the APIServer API: Intermediate")
	servers := start("no-apiserver-api")
	eventuallyServe(g, "no API: Intermediate", servers, []tlsClient{tls12Only, tls13}, []tlsClient{tls12CBC})
	stop()

	scheme := runtime.NewScheme()
	g.Expect(configv1.AddToScheme(scheme)).To(Succeed())
	k8s, err := client.New(cluster.RestConfig(), client.Options{Scheme: scheme})
	g.Expect(err).NotTo(HaveOccurred())
	crd, err := repo.OpenShiftAPIServerCRD()
	g.Expect(err).NotTo(HaveOccurred())
	_, err = envtest.InstallCRDs(cluster.RestConfig(), envtest.CRDInstallOptions{ErrorIfPathMissing: true, Paths: []string{crd}})
	g.Expect(err).NotTo(HaveOccurred())
	apiServer := &configv1.APIServer{ObjectMeta: metav1.ObjectMeta{Name: "cluster"},
		Spec: configv1.APIServerSpec{TLSSecurityProfile: &configv1.TLSSecurityProfile{Type: configv1.TLSProfileIntermediateType}}}
	g.Expect(k8s.Create(ctx, apiServer)).To(Succeed())
	setProfile := func(p *configv1.TLSSecurityProfile) {
		patch := client.MergeFrom(apiServer.DeepCopy())
		apiServer.Spec.TLSSecurityProfile = p
		g.Expect(k8s.Patch(ctx, apiServer, patch)).To(Succeed())
	}

	t.Log("with the API: Intermediate, then each change of the profile, on one running operator")
	servers = start("following")
	eventuallyServe(g, "Intermediate", servers, []tlsClient{tls12Only, tls13}, []tlsClient{tls12CBC})
	setProfile(&configv1.TLSSecurityProfile{Type: configv1.TLSProfileModernType})
	eventuallyServe(g, "Modern", servers, []tlsClient{tls13}, []tlsClient{tls12Only, tls12CBC})
	setProfile(&configv1.TLSSecurityProfile{Type: configv1.TLSProfileOldType})
	eventuallyServe(g, "Old", servers, []tlsClient{tls12Only, tls12CBC, tls13}, nil)
	setProfile(customTLS)
	eventuallyServe(g, "Custom", servers, []tlsClient{tls13}, []tlsClient{tls12AES128, tls12CBC})
	for name, addr := range servers {
		st, err := certstest.Handshake(ctx, addr, tls12Only.offer)
		g.Expect(err).NotTo(HaveOccurred(), "Custom: the %s server refused a TLS 1.2 client offering Go's defaults", name)
		g.Expect(aes256GCM).To(ContainElement(st.CipherSuite), "Custom: the %s server chose %s", name, tls.CipherSuiteName(st.CipherSuite))
	}
	g.Expect(k8s.Delete(ctx, apiServer)).To(Succeed())
	eventuallyServe(g, "the APIServer deleted: Intermediate", servers, []tlsClient{tls12Only, tls12AES128}, []tlsClient{tls12CBC})
	stop()

	t.Log("flags win: TLS 1.2 with AES-256 GCM under Modern")
	apiServer = &configv1.APIServer{ObjectMeta: metav1.ObjectMeta{Name: "cluster"},
		Spec: configv1.APIServerSpec{TLSSecurityProfile: &configv1.TLSSecurityProfile{Type: configv1.TLSProfileModernType}}}
	g.Expect(k8s.Create(ctx, apiServer)).To(Succeed())
	servers = start("flags", "--tls-min-version=VersionTLS12",
		"--tls-cipher-suites=TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384")
	eventuallyServe(g, "Modern under the flags", servers, []tlsClient{tls12Only, tls13}, []tlsClient{tls12AES128})
	for name, addr := range servers {
		st, err := certstest.Handshake(ctx, addr, tls12Only.offer)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(aes256GCM).To(ContainElement(st.CipherSuite), "--tls-cipher-suites: the %s server chose %s", name, tls.CipherSuiteName(st.CipherSuite))
	}
}

// eventuallyServe waits until every server accepts each of accepted and
// refuses each of refused, in new handshakes: a profile change reaches the
// servers through a watch.
func eventuallyServe(g *WithT, profile string, servers map[string]string, accepted, refused []tlsClient) {
	g.Eventually(func(g Gomega) {
		for name, addr := range servers {
			for _, c := range accepted {
				_, err := certstest.Handshake(context.Background(), addr, c.offer)
				g.Expect(err).NotTo(HaveOccurred(), "the %s server refused a client offering %s", name, c.name)
			}
			for _, c := range refused {
				st, err := certstest.Handshake(context.Background(), addr, c.offer)
				g.Expect(err).To(HaveOccurred(), "the %s server accepted a client offering %s, with %s %s",
					name, c.name, tls.VersionName(st.Version), tls.CipherSuiteName(st.CipherSuite))
			}
		}
	}).WithTimeout(30*time.Second).WithPolling(200*time.Millisecond).Should(Succeed(), profile)
}
