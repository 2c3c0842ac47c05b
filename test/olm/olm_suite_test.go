package olm

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	operatorsv1 "github.com/operator-framework/api/pkg/operators/v1"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	utilversion "k8s.io/apimachinery/pkg/util/version"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
	"github.com/example-inc/memcached-operator/test/framework/harness"
	"github.com/example-inc/memcached-operator/test/framework/images"
	"github.com/example-inc/memcached-operator/test/framework/localcluster"
	"github.com/example-inc/memcached-operator/test/framework/registrymirror"
	"github.com/example-inc/memcached-operator/test/framework/repo"
)

func TestOLM(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "OLM Suite")
}

var (
	// paths are the OLM binaries, CRDs and opm.
	paths tools
	// workDir holds the cluster, the logs, the catalogs and the images; it
	// is kept when a spec fails.
	workDir string
	cluster *localcluster.Cluster
	// k8s is an admin client of the cluster, cs the same as a clientset
	// (for pod logs).
	k8s client.Client
	cs  kubernetes.Interface
	// olmOps are OLM's olm and catalog operators.
	olmOps *olmOperators
	// mirror stands in for the registries the bundle's images come from.
	mirror *registrymirror.Mirror
	// bundleDir is the committed bundle; fromVersion is its version and
	// toVersion the one the upgrade moves to.
	bundleDir              = filepath.Join(repo.Root(), "bundle")
	fromVersion, toVersion string
)

var _ = BeforeSuite(func(ctx SpecContext) {
	var missing []string
	paths, missing = toolsFromEnv()
	Expect(missing).To(BeEmpty(), "run make test-olm, which builds and names them")

	workDir = harness.WorkDir("olm")
	// The suite's own clients log to a file, not the test output.
	harness.LogTo(workDir, "suite.log")

	var err error
	fromVersion, err = bundleVersion(bundleDir)
	Expect(err).NotTo(HaveOccurred())
	v := utilversion.MustParseSemantic(fromVersion)
	toVersion = fmt.Sprintf("%d.%d.%d", v.Major(), v.Minor(), v.Patch()+1)

	// The real node pulls nothing: the operator image is imported under the
	// names both CSVs give it, and memcached and the exporter under the
	// names the Subscriptions give them (subscriptionConfig).
	start := time.Now()
	fromImage, err := bundleImage(bundleDir)
	Expect(err).NotTo(HaveOccurred())
	toImage := strings.TrimSuffix(fromImage, fromVersion) + toVersion
	dir := filepath.Join(workDir, "images")
	var operatorImage, memcachedImage, exporterImage images.Image
	var g errgroup.Group
	g.Go(func() (err error) {
		operatorImage, err = images.Operator(ctx, filepath.Join(dir, "operator"), fromImage, toImage)
		return err
	})
	g.Go(func() (err error) {
		memcachedImage, err = images.Memcached(filepath.Join(dir, "memcached"), images.MemcachedTag)
		return err
	})
	g.Go(func() (err error) {
		exporterImage, err = images.MemcachedExporter(ctx, filepath.Join(dir, "memcached-exporter"), images.MemcachedExporterTag)
		return err
	})
	Expect(g.Wait()).To(Succeed())
	GinkgoWriter.Printf("images %s and %s written in %s\n", fromImage, toImage, time.Since(start).Round(time.Millisecond))

	// The registries the bundle's images come from, stood in for on
	// loopback (disconnected_test.go pushes to them); the real node pulls
	// from them alone.
	mirror, err = startMirror(workDir)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(mirror.Close)
	cluster = harness.StartCluster(ctx, localcluster.Options{
		BinDir: paths.controlPlane, Dir: filepath.Join(workDir, "cluster"), RealNode: true,
		RegistryMirrors: containerdMirrors(mirror),
	})
	Expect(cluster.ImportImages(ctx, operatorImage.Archive, memcachedImage.Archive, exporterImage.Archive)).To(Succeed())

	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(apiextensionsv1.AddToScheme(scheme))
	utilruntime.Must(operatorsv1alpha1.AddToScheme(scheme))
	utilruntime.Must(operatorsv1.AddToScheme(scheme))
	utilruntime.Must(cachev1.AddToScheme(scheme))
	// client-go's default of 5 requests a second would pace the admission
	// probe (20 rounds of two creates a second) below what it measures.
	cfg := cluster.RestConfig()
	cfg.QPS, cfg.Burst = 200, 400
	k8s, err = client.New(cfg, client.Options{Scheme: scheme})
	Expect(err).NotTo(HaveOccurred())
	cs, err = kubernetes.NewForConfig(cluster.RestConfig())
	Expect(err).NotTo(HaveOccurred())

	// olm looks for the Proxy API only when it starts, so the Proxy CRD and
	// the cluster Proxy come first.
	start = time.Now()
	crds, err := readCRDs(paths.olmCRDs, paths.proxyCRD)
	Expect(err).NotTo(HaveOccurred())
	createCRDs(ctx, k8s, crds)
	createClusterProxy(ctx, k8s)
	Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: olmNamespace}})).To(Succeed())

	olmOps = &olmOperators{tools: paths, cluster: cluster, dir: workDir}
	Expect(olmOps.startOLM()).To(Succeed())
	Expect(olmOps.startCatalog()).To(Succeed())
	DeferCleanup(olmOps.stopAll)
	GinkgoWriter.Printf("%d CRDs, cluster Proxy and OLM up in %s\n", len(crds), time.Since(start).Round(time.Millisecond))
}, NodeTimeout(10*time.Minute))
