package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	cmapi "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
	"github.com/example-inc/memcached-operator/test/fixtures"
	"github.com/example-inc/memcached-operator/test/localcluster"
	"github.com/example-inc/memcached-operator/test/operatorproc"
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
	binDir := fixtures.ControlPlaneDir()
	if missing := localcluster.MissingBinaries(binDir); len(missing) > 0 {
		Skip(fmt.Sprintf("control plane binaries %v missing from %s: run make control-plane", missing, binDir))
	}
	for _, tool := range []string{"kubectl", "kustomize"} {
		if _, err := os.Stat(toolPath(tool)); err != nil {
			Skip(fmt.Sprintf("%v: run make %s", err, tool))
		}
	}

	var err error
	workDir, err = os.MkdirTemp("", "memcached-operator-e2e-")
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() {
		if anySpecFailed || CurrentSpecReport().Failed() {
			GinkgoWriter.Printf("keeping %s (cluster logs in cluster/logs, cert-manager.log, operator.log)\n", workDir)
			return
		}
		_ = os.RemoveAll(workDir)
	})

	// Everything in this process (cert-manager, the CA injector, client
	// warnings) logs to a file rather than the test output.
	logFile, err := os.Create(filepath.Join(workDir, "cert-manager.log"))
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(logFile.Close)
	logger := zap.New(zap.WriteTo(logFile), zap.UseDevMode(true))
	ctrl.SetLogger(logger)
	klog.SetLogger(logger)

	// The operator builds while the cluster starts.
	operatorBinary = filepath.Join(workDir, "manager")
	built := make(chan error, 1)
	go func() { built <- operatorproc.Build(ctx, operatorBinary) }()

	start := time.Now()
	cluster, err = localcluster.New(localcluster.Options{BinDir: binDir, Dir: filepath.Join(workDir, "cluster")})
	Expect(err).NotTo(HaveOccurred())
	Expect(cluster.Start(ctx)).To(Succeed())
	DeferCleanup(cluster.Stop)
	GinkgoWriter.Printf("local cluster up in %s\n", time.Since(start).Round(time.Millisecond))

	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(cachev1.AddToScheme(scheme))
	utilruntime.Must(cmapi.AddToScheme(scheme))
	k8s, err = client.New(cluster.RestConfig(), client.Options{Scheme: scheme})
	Expect(err).NotTo(HaveOccurred())

	// cert-manager: its CRDs as the module ships them, then its controllers.
	start = time.Now()
	crds, err := certManagerCRDs()
	Expect(err).NotTo(HaveOccurred())
	Expect(kubectl(ctx, nil, "apply", "--server-side", "-f", crds)).Error().NotTo(HaveOccurred())
	Expect(kubectl(ctx, nil, "wait", "--for=condition=Established", "--timeout=60s", "-f", crds)).Error().NotTo(HaveOccurred())
	cmCtx, stopCertManager := context.WithCancel(context.Background())
	DeferCleanup(stopCertManager)
	Expect(runCertManager(cmCtx, cluster.KubeconfigPath(), cluster.RestConfig(), logger)).To(Succeed())
	GinkgoWriter.Printf("cert-manager CRDs and controllers up in %s\n", time.Since(start).Round(time.Millisecond))

	start = time.Now()
	Eventually(built).WithContext(ctx).Should(Receive(Succeed()))
	GinkgoWriter.Printf("operator built (waited %s after the cluster)\n", time.Since(start).Round(time.Millisecond))
}, NodeTimeout(8*time.Minute))

// anySpecFailed keeps workDir for a look at the logs.
var anySpecFailed bool

var _ = ReportAfterEach(func(r SpecReport) {
	if r.Failed() {
		anySpecFailed = true
	}
})

// kubectl runs bin/kubectl against the cluster, with stdin if given.
func kubectl(ctx context.Context, stdin []byte, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, toolPath("kubectl"), append([]string{"--kubeconfig", cluster.KubeconfigPath()}, args...)...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("kubectl %v: %w: %s", args, err, stderr.String())
	}
	return out, nil
}
