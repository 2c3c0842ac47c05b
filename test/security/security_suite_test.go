package security

import (
	"crypto/rand"
	"encoding/hex"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
	"github.com/example-inc/memcached-operator/test/framework/harness"
	"github.com/example-inc/memcached-operator/test/framework/localcluster"
	"github.com/example-inc/memcached-operator/test/framework/operatorproc"
	"github.com/example-inc/memcached-operator/test/framework/repo"
)

func TestSecurity(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Security Suite")
}

// Timeouts sized for a busy two-core machine; they bound waits, they are
// not figures.
const (
	readyTimeout = 2 * time.Minute
	poll         = 250 * time.Millisecond
)

var (
	cluster *localcluster.Cluster
	// k8s and cs are admin clients of the cluster.
	k8s client.Client
	cs  kubernetes.Interface
	// workDir holds the operator binary, the cluster's state and logs and
	// the operators' logs; kept when anything failed.
	workDir        string
	operatorBinary string
	// configDefault is `kustomize build config/default`.
	configDefault []*unstructured.Unstructured
	// operatorKubeconfig authenticates as the operator's ServiceAccount.
	operatorKubeconfig string
	// op is the operator every spec runs against.
	op *operator
	// proxy is the proxy op has in its environment, password included.
	proxy proxySettings
)

var _ = BeforeSuite(func(ctx SpecContext) {
	var err error
	configDefault, err = kustomizeBuild(configDefaultDir)
	Expect(err).NotTo(HaveOccurred())

	workDir = harness.WorkDir("security")
	build := harness.BuildOperator(ctx, workDir)
	cluster = harness.StartCluster(ctx, localcluster.Options{Dir: filepath.Join(workDir, "cluster")})

	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(cachev1.AddToScheme(scheme))
	k8s, err = client.New(cluster.RestConfig(), client.Options{Scheme: scheme})
	Expect(err).NotTo(HaveOccurred())
	cs, err = kubernetes.NewForConfig(cluster.RestConfig())
	Expect(err).NotTo(HaveOccurred())
	_, err = envtest.InstallCRDs(cluster.RestConfig(), envtest.CRDInstallOptions{
		Paths: []string{repo.CRDDir()}, ErrorIfPathMissing: true,
	})
	Expect(err).NotTo(HaveOccurred())

	// The operator runs as config/default's ServiceAccount with exactly the
	// roles config/default binds to it, plus what local webhook mode needs.
	Expect(installOperatorRBAC(ctx, configDefault)).To(Succeed())
	Expect(grantLocalWebhookMode(ctx)).To(Succeed())
	operatorKubeconfig = filepath.Join(workDir, "operator.kubeconfig")
	Expect(cluster.WriteServiceAccountKubeconfig(ctx, operatorKubeconfig, operatorNamespace, operatorServiceAccount)).To(Succeed())

	proxy = newProxySettings(randomPassword())
	operatorBinary = build.Wait(ctx)

	// Registered before the operator starts, so it runs after the operator
	// has stopped: the whole log, shutdown included, is checked.
	DeferCleanup(func() {
		Expect(checkOperatorLogs()).To(Succeed())
	})
	op, err = startOperator(ctx, operatorOptions{name: "operator", webhooks: operatorproc.WebhooksLocal})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(op.stop)
}, NodeTimeout(10*time.Minute))

// randomPassword is the proxy password: unique per run, so a match in a log
// can only come from this run's environment.
func randomPassword() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return "pw" + hex.EncodeToString(b)
}
