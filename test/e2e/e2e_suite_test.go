package e2e

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	cmapi "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
	"github.com/example-inc/memcached-operator/test/framework/certmanager"
	"github.com/example-inc/memcached-operator/test/framework/harness"
	"github.com/example-inc/memcached-operator/test/framework/localcluster"
)

func TestE2E(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "E2E Suite")
}

var (
	// cluster is the local cluster, with cert-manager running against it.
	cluster *localcluster.Cluster
	// k8s is an admin client of the cluster.
	k8s client.Client
	// workDir holds the operator binary, the cluster's files and the logs;
	// it is kept when the suite fails.
	workDir string
	// operatorBinary is the manager, built from this checkout.
	operatorBinary string
)

var _ = BeforeSuite(func(ctx SpecContext) {
	harness.RequireTools("kubectl", "kustomize")
	workDir = harness.WorkDir("e2e")
	// Everything in this process (cert-manager, the CA injector, client
	// warnings) logs to a file rather than the test output.
	logger := harness.LogTo(workDir, "cert-manager.log")
	build := harness.BuildOperator(ctx, workDir)
	cluster = harness.StartCluster(ctx, localcluster.Options{Dir: filepath.Join(workDir, "cluster")})

	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(cachev1.AddToScheme(scheme))
	utilruntime.Must(cmapi.AddToScheme(scheme))
	utilruntime.Must(monitoringv1.AddToScheme(scheme))
	var err error
	k8s, err = client.New(cluster.RestConfig(), client.Options{Scheme: scheme})
	Expect(err).NotTo(HaveOccurred())

	// cert-manager: its CRDs as the module ships them, then its controllers.
	start := time.Now()
	cmCtx, stopCertManager := context.WithCancel(context.Background())
	DeferCleanup(stopCertManager)
	Expect(certmanager.Start(cmCtx, cluster.KubeconfigPath(), cluster.RestConfig(), logger)).To(Succeed())
	GinkgoWriter.Printf("cert-manager CRDs and controllers up in %s\n", time.Since(start).Round(time.Millisecond))

	operatorBinary = build.Wait(ctx)
}, NodeTimeout(8*time.Minute))

// kubectl runs bin/kubectl against the cluster, with stdin if given.
func kubectl(ctx context.Context, stdin []byte, args ...string) ([]byte, error) {
	return harness.Kubectl(ctx, cluster.KubeconfigPath(), stdin, args...)
}
