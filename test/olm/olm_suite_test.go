package olm

import (
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	operatorsv1 "github.com/operator-framework/api/pkg/operators/v1"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
	"github.com/example-inc/memcached-operator/test/framework/harness"
	"github.com/example-inc/memcached-operator/test/framework/localcluster"
)

func TestOLM(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "OLM Suite")
}

var (
	// paths are the OLM binaries, CRDs and opm.
	paths tools
	// workDir holds the cluster, the logs, the catalogs and the operator;
	// it is kept when a spec fails.
	workDir string
	cluster *localcluster.Cluster
	// k8s is an admin client of the cluster.
	k8s client.Client
	// olmOps are OLM's olm and catalog operators.
	olmOps *olmOperators
	// operatorBinary is the manager, built from this checkout.
	operatorBinary string
)

// operatorNamespace is where the Subscription installs the operator: the
// CSV's suggested namespace.
const operatorNamespace = "memcached-operator-system"

var _ = BeforeSuite(func(ctx SpecContext) {
	var missing []string
	paths, missing = toolsFromEnv()
	Expect(missing).To(BeEmpty(), "run make test-olm, which builds and names them")

	workDir = harness.WorkDir("olm")
	// The suite's own clients log to a file, not the test output.
	harness.LogTo(workDir, "suite.log")
	build := harness.BuildOperator(ctx, workDir)
	cluster = harness.StartCluster(ctx, localcluster.Options{BinDir: paths.controlPlane, Dir: filepath.Join(workDir, "cluster")})

	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(apiextensionsv1.AddToScheme(scheme))
	utilruntime.Must(operatorsv1alpha1.AddToScheme(scheme))
	utilruntime.Must(operatorsv1.AddToScheme(scheme))
	utilruntime.Must(cachev1.AddToScheme(scheme))
	var err error
	k8s, err = client.New(cluster.RestConfig(), client.Options{Scheme: scheme})
	Expect(err).NotTo(HaveOccurred())

	// olm looks for the Proxy API only when it starts, so the Proxy CRD and
	// the cluster Proxy come first.
	start := time.Now()
	crds, err := readCRDs(paths.olmCRDs, paths.proxyCRD)
	Expect(err).NotTo(HaveOccurred())
	createCRDs(ctx, k8s, crds)
	createClusterProxy(ctx, k8s)
	for _, ns := range []string{olmNamespace, operatorNamespace} {
		Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
	}

	olmOps = &olmOperators{tools: paths, cluster: cluster, dir: workDir}
	Expect(olmOps.startOLM()).To(Succeed())
	Expect(olmOps.startCatalog()).To(Succeed())
	DeferCleanup(olmOps.stopAll)
	GinkgoWriter.Printf("%d CRDs, cluster Proxy and OLM up in %s\n", len(crds), time.Since(start).Round(time.Millisecond))

	operatorBinary = build.Wait(ctx)
}, NodeTimeout(10*time.Minute))
