package controllers_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"
	configv1 "github.com/openshift/api/config/v1"
	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/example-inc/memcached-operator/api/v1/gen"
	"github.com/example-inc/memcached-operator/controllers"
	"github.com/example-inc/memcached-operator/hack/local-cluster/localcluster"
	"github.com/example-inc/memcached-operator/hack/repo"
)

// The suite's operator watches watchedNS only; unwatchedNS proves the
// WATCH_NAMESPACE restriction.
const (
	watchedNS   = "mc-watched"
	unwatchedNS = "mc-unwatched"
)

var (
	ctx     context.Context
	cluster *localcluster.Cluster
	scheme  = gen.Scheme(configv1.AddToScheme, monitoringv1.AddToScheme)
	// k8s reads and writes straight to the API server, not through a cache,
	// so assertions see the server's state.
	k8s client.Client
	// op is the operator under test, restarted by tests that need other
	// Options.
	op *operator
	// operatorLogs holds every line the operators log, debug lines included;
	// zap writes one entry per call.
	operatorLogs = gbytes.NewBuffer()
	// reconcilerMetrics are the metrics every operator of the suite reports
	// to, one for the process as cmd/manager/app registers one.
	reconcilerMetrics = controllers.NewMetrics()
)

func TestControllers(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Controllers Suite")
}

var _ = BeforeSuite(func() {
	logf.SetLogger(zap.New(zap.WriteTo(io.MultiWriter(GinkgoWriter, operatorLogs)), zap.UseDevMode(true)))
	ctx = context.Background()
	// Every wait of the suite is for the control plane or the operator.
	SetDefaultEventuallyTimeout(timeout)
	SetDefaultEventuallyPollingInterval(interval)

	bin := repo.ControlPlaneDir()
	_, err := os.Stat(filepath.Join(bin, "kube-apiserver"))
	Expect(err).NotTo(HaveOccurred(), "the control plane is missing: run make control-plane (or make test)")

	cluster, err = localcluster.New(localcluster.Options{BinDir: bin})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { Expect(cluster.Stop()).To(Succeed()) })
	Expect(cluster.Start(ctx)).To(Succeed())

	_, err = envtest.InstallCRDs(cluster.RestConfig(), envtest.CRDInstallOptions{
		Paths: []string{repo.CRDDir()}, ErrorIfPathMissing: true,
	})
	Expect(err).NotTo(HaveOccurred())

	k8s, err = client.New(cluster.RestConfig(), client.Options{Scheme: scheme})
	Expect(err).NotTo(HaveOccurred())
	for _, ns := range []string{watchedNS, unwatchedNS} {
		Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
	}

	op = startOperator(suiteOptions())
	DeferCleanup(func() { op.stop() })
})

// logLines returns the lines the operators logged that contain every one of
// substrings, so that specs can assert how often something was logged.
func logLines(substrings ...string) []string {
	var out []string
	for _, line := range strings.Split(string(operatorLogs.Contents()), "\n") {
		if !slices.ContainsFunc(substrings, func(s string) bool { return !strings.Contains(line, s) }) {
			out = append(out, line)
		}
	}
	return out
}

// operator is a running manager with the Memcached reconciler, its API
// requests counted.
type operator struct {
	requests *requestCounter
	// cache is the manager's informer cache, to prove what it holds.
	cache cache.Cache
	stop  func()
}

// suiteProxy is the proxy the suite's operator was given, as OLM gives a
// cluster's: its Deployments carry it, and a hand edit of it is undone.
var suiteProxy = []corev1.EnvVar{{Name: "HTTPS_PROXY", Value: "http://proxy.internal.example:3128"}}

// suiteOptions are the reconciler's options in the suite: the default size
// policy, more than one worker, one Metrics, as in production, and a proxy.
func suiteOptions() controllers.Options {
	return controllers.Options{DefaultSize: 3, MinSize: 1, MaxSize: 16, Workers: 4, Metrics: reconcilerMetrics, ProxyEnv: suiteProxy}
}

// startOperator runs the reconciler with opts, watching watchedNS, as
// cmd/manager/app wires it.
func startOperator(opts controllers.Options, tweaks ...func(*ctrl.Options)) *operator {
	GinkgoHelper()
	cfg, requests := countRequests(rest.CopyConfig(cluster.RestConfig()))
	mgrOpts := ctrl.Options{
		Scheme:                 scheme,
		Cache:                  controllers.CacheOptions([]string{watchedNS}, opts.PrometheusOperator, opts.CertManager),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		// Tests restart the operator in one process; controller-runtime
		// refuses a second controller of the same name otherwise.
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	}
	for _, tweak := range tweaks {
		tweak(&mgrOpts)
	}
	mgr, err := ctrl.NewManager(cfg, mgrOpts)
	Expect(err).NotTo(HaveOccurred())
	Expect(controllers.NewMemcachedReconciler(mgr, opts).
		SetupWithManager(mgr)).To(Succeed())

	mgrCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer GinkgoRecover()
		defer close(done)
		Expect(mgr.Start(mgrCtx)).To(Succeed())
	}()
	Expect(mgr.GetCache().WaitForCacheSync(mgrCtx)).To(BeTrue())
	return &operator{requests: requests, cache: mgr.GetCache(), stop: func() { cancel(); <-done }}
}

// runOperator replaces the running operator by one with opts until the
// calling node ends (for a BeforeAll, the container's last spec).
func runOperator(opts controllers.Options) {
	GinkgoHelper()
	op.stop()
	op = startOperator(opts)
	DeferCleanup(restoreOperator)
}

// restoreOperator puts the suite's operator back in place of the running one.
func restoreOperator() {
	op.stop()
	op = startOperator(suiteOptions())
}

// installAPI installs the CRDs in dir, an optional API the suite's cluster
// does not serve until then, and waits until served says discovery shows
// it. The operators of the suite learn of it only when started again.
func installAPI(dir string, served func(discovery.DiscoveryInterface) (bool, error)) {
	GinkgoHelper()
	dc, err := discovery.NewDiscoveryClientForConfig(cluster.RestConfig())
	Expect(err).NotTo(HaveOccurred())
	Expect(served(dc)).To(BeFalse(), "before the CRDs are installed")
	_, err = envtest.InstallCRDs(cluster.RestConfig(), envtest.CRDInstallOptions{Paths: []string{dir}, ErrorIfPathMissing: true})
	Expect(err).NotTo(HaveOccurred(), "the CRDs of %s (make test builds them)", dir)
	Eventually(func() (bool, error) { return served(dc) }).Should(BeTrue())
}
