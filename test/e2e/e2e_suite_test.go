package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"
	. "github.com/onsi/gomega"
	"golang.org/x/sync/errgroup"
	utilversion "k8s.io/apimachinery/pkg/util/version"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/example-inc/memcached-operator/hack/local-cluster/images"
	"github.com/example-inc/memcached-operator/hack/local-cluster/memcachedproc"
	"github.com/example-inc/memcached-operator/hack/repo"
	"github.com/example-inc/memcached-operator/test/framework/certmanager"
	"github.com/example-inc/memcached-operator/test/framework/harness"
	"github.com/example-inc/memcached-operator/test/framework/manifest"
	"github.com/example-inc/memcached-operator/test/framework/operatorproc"
	"github.com/example-inc/memcached-operator/test/framework/registrymirror"
)

func TestE2E(t *testing.T) {
	RegisterFailHandler(Fail)
	var err error
	if clusterProvider, err = providerFromEnv(); err != nil {
		t.Fatal(err)
	}
	suiteConfig, reporterConfig := GinkgoConfiguration()
	// A filter that selects nothing (a mistyped label, or only host specs
	// on a cluster the suite did not start) is a failed run, not a pass.
	suiteConfig.FailOnEmpty = true
	labelFilter = suiteConfig.LabelFilter
	if !clusterProvider.onHost() {
		suiteConfig.LabelFilter = withoutHost(labelFilter)
	}
	RunSpecs(t, "E2E Suite", suiteConfig, reporterConfig)
}

// The images the suite imports into the real node. memcachedB is the
// oldest memcached release supported, for RELATED_IMAGE_MEMCACHED to move
// to; memcachedA, the one every other spec runs, is the release shipped.
const (
	memcachedTagB = "localhost/memcached:oldest"
	operatorTag   = "localhost/memcached-operator:test"
)

var (
	// workDir holds the images, the cluster's files and every log; it is
	// kept when a spec fails.
	workDir string
	// operatorBinary is the manager built for the host.
	operatorBinary string
	// memcachedA, memcachedB and operatorImage are the image archives;
	// tlsReloaderImage is the sidecar of memcached pods that serve TLS,
	// exporterImage the metrics sidecar of those with monitoring on.
	memcachedA, memcachedB, operatorImage, tlsReloaderImage, exporterImage images.Image

	// clusterProvider gives the suite its cluster (providerFromEnv).
	clusterProvider provider
	// cluster is the one cluster every spec runs on, with cert-manager's
	// controllers running against it; k8s is its admin client.
	cluster *realCluster
	k8s     client.WithWatch
	cs      kubernetes.Interface
	// mirror stands in for the registries the bundle's images come from:
	// the real node pulls those registries' images from it alone.
	mirror *registrymirror.Mirror
	// operatorRef is the operator image a kubectl install runs, and
	// clientImage the image of client pods (nc, nslookup): what the local
	// cluster's node has, or on another cluster what E2E_OPERATOR_IMAGE
	// and E2E_CLIENT_IMAGE name (existingProvider).
	operatorRef = operatorTag
	clientImage = images.BusyboxTag
	// fromVersion is the committed bundle's version, toVersion the one the
	// OLM upgrade moves to; the operator image is imported under the names
	// both CSVs give it, fromImage and toImage.
	fromVersion, toVersion, fromImage, toImage string
)

var _ = BeforeSuite(func(ctx SpecContext) {
	harness.RequireTools("kubectl", "kustomize")
	workDir = harness.WorkDir("e2e")
	// Everything in this process (cert-manager, the CA injector, client
	// warnings) logs to a file rather than the test output.
	logger := harness.LogTo(workDir, "suite.log")
	var err error
	fromVersion, err = bundleVersion(manifest.BundleDir)
	Expect(err).NotTo(HaveOccurred())
	v := utilversion.MustParseSemantic(fromVersion)
	toVersion = fmt.Sprintf("%d.%d.%d", v.Major(), v.Minor(), v.Patch()+1)
	fromImage, err = bundleImage(manifest.BundleDir)
	Expect(err).NotTo(HaveOccurred())
	toImage = strings.TrimSuffix(fromImage, fromVersion) + toVersion
	cluster = clusterProvider.start(ctx)
	k8s, cs = cluster.k8s, cluster.cs

	// cert-manager: its CRDs as the module ships them, then its controllers,
	// unless the cluster has its own.
	if certManagerServed(cs) {
		GinkgoWriter.Println("cert-manager's API served: the cluster's own cert-manager issues the certificates")
		return
	}
	if !clusterProvider.onHost() {
		// Not left on someone's cluster, where the next run would take the
		// API for a cert-manager of the cluster's own. Registered first,
		// to run after the controllers have stopped.
		crds, err := repo.CertManagerCRDDir()
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() error {
			return envtest.UninstallCRDs(cluster.RestConfig(), envtest.CRDInstallOptions{Paths: []string{crds}})
		})
	}
	start := time.Now()
	cmCtx, stopCertManager := context.WithCancel(context.Background())
	DeferCleanup(stopCertManager)
	Expect(certmanager.Start(cmCtx, cluster.KubeconfigPath(), cluster.RestConfig(), logger)).To(Succeed())
	GinkgoWriter.Printf("cert-manager CRDs and controllers up in %s\n", time.Since(start).Round(time.Millisecond))
}, NodeTimeout(10*time.Minute))

// startLocal builds the operator and the images, starts the registry
// mirror and then the local cluster with the real node, and imports the
// images into it.
func startLocal(ctx context.Context) *realCluster {
	GinkgoHelper()
	start := time.Now()
	dir := filepath.Join(workDir, "images")
	var g errgroup.Group
	g.Go(func() (err error) {
		operatorBinary, err = operatorproc.Build(ctx, filepath.Join(workDir, "manager"))
		return err
	})
	g.Go(func() (err error) {
		operatorImage, err = images.Operator(ctx, filepath.Join(dir, "operator"), operatorTag, fromImage, toImage)
		return err
	})
	g.Go(func() (err error) {
		tlsReloaderImage, err = images.TLSReloader(ctx, filepath.Join(dir, "tls-reloader"), images.TLSReloaderTag)
		return err
	})
	g.Go(func() (err error) {
		exporterImage, err = images.MemcachedExporter(ctx, filepath.Join(dir, "memcached-exporter"), images.MemcachedExporterTag)
		return err
	})
	g.Go(func() (err error) {
		if memcachedA, err = images.Memcached(filepath.Join(dir, "a"), images.MemcachedTag); err != nil {
			return err
		}
		memcachedB, err = images.MemcachedOf(memcachedproc.Oldest(), filepath.Join(dir, "b"), memcachedTagB)
		return err
	})
	Expect(g.Wait()).To(Succeed())
	GinkgoWriter.Printf("operator built, images written in %s\n", time.Since(start).Round(time.Millisecond))

	var err error
	mirror, err = startMirror(workDir)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(mirror.Close)
	return startRealCluster(ctx, filepath.Join(workDir, "cluster"), containerdMirrors(mirror))
}

// eventually is Eventually with the suite's defaults: real pods start in
// seconds, but a loaded two-core machine can take a minute.
func eventually(ctx context.Context, f any) AsyncAssertion {
	return Eventually(f).WithContext(ctx).WithTimeout(2 * time.Minute).WithPolling(250 * time.Millisecond)
}

// kubectl runs bin/kubectl against the cluster, with stdin if given.
func kubectl(ctx context.Context, stdin []byte, args ...string) ([]byte, error) {
	return harness.Kubectl(ctx, cluster.KubeconfigPath(), stdin, args...)
}

// envCluster chooses the provider of the suite's cluster: local (the
// default) starts a local cluster whose node is this host; existing runs on
// the cluster of $KUBECONFIG, which anyone may have started anywhere (kind,
// OpenShift, a local cluster started apart).
const envCluster = "E2E_CLUSTER"

// provider gives the suite its cluster.
type provider interface {
	// start returns the cluster, with the CRD installed. What the
	// provider started stops when the suite ends.
	start(ctx context.Context) *realCluster
	// onHost reports whether the cluster is one the suite started on this
	// host. Only then do the specs labelled host run.
	onHost() bool
}

func providerFromEnv() (provider, error) {
	switch name := os.Getenv(envCluster); name {
	case "", "local":
		return localProvider{}, nil
	case "existing":
		kubeconfig := os.Getenv("KUBECONFIG")
		if kubeconfig == "" || strings.ContainsRune(kubeconfig, filepath.ListSeparator) {
			return nil, fmt.Errorf("%s=existing runs on the cluster of $KUBECONFIG, which must name one file; it is %q", envCluster, kubeconfig)
		}
		return existingProvider{kubeconfig: kubeconfig}, nil
	default:
		return nil, fmt.Errorf("%s=%q: want local or existing", envCluster, name)
	}
}

type localProvider struct{}

func (localProvider) start(ctx context.Context) *realCluster { return startLocal(ctx) }
func (localProvider) onHost() bool                           { return true }

// existingProvider imports no image: the cluster's nodes pull what the
// E2E_*_IMAGE variables name, by default the names under which the local
// cluster's tool imports them (local-cluster up, with --image for the
// operator's).
type existingProvider struct{ kubeconfig string }

func (p existingProvider) start(context.Context) *realCluster {
	GinkgoHelper()
	memcachedA.Ref = envOr("E2E_MEMCACHED_IMAGE", images.MemcachedTag)
	exporterImage.Ref = envOr("E2E_MEMCACHED_EXPORTER_IMAGE", images.MemcachedExporterTag)
	tlsReloaderImage.Ref = envOr("E2E_TLS_RELOADER_IMAGE", images.TLSReloaderTag)
	operatorRef = envOr("E2E_OPERATOR_IMAGE", operatorTag)
	clientImage = envOr("E2E_CLIENT_IMAGE", images.BusyboxTag)
	c, err := harness.ExistingCluster(p.kubeconfig)
	Expect(err).NotTo(HaveOccurred())
	return newRealCluster(c, nil)
}

func (existingProvider) onHost() bool { return false }

func envOr(name, value string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return value
}

// labelFilter is the label filter the suite was given (make test-e2e
// LABELS=...).
var labelFilter string

// withoutHost is filter with the specs labelled host left out.
func withoutHost(filter string) string {
	if filter == "" {
		return "!" + labelHost
	}
	return "(" + filter + ") && !" + labelHost
}

// certManagerServed reports whether the cluster serves cert-manager's
// Certificates already: its own cert-manager issues them then.
func certManagerServed(cs kubernetes.Interface) bool {
	_, err := cs.Discovery().ServerResourcesForGroupVersion("cert-manager.io/v1")
	return err == nil
}

// On a cluster it did not start, the suite names the specs it left out for
// needing this host, so that a pass there says what it did not prove.
var _ = ReportAfterSuite("specs left out on a cluster the suite did not start", func(r Report) {
	if clusterProvider == nil || clusterProvider.onHost() {
		return
	}
	// Those the filter given would have run, had they not needed the host.
	asked, err := types.ParseLabelFilter(labelFilter)
	Expect(err).NotTo(HaveOccurred())
	var left []string
	for _, s := range r.SpecReports {
		if s.LeafNodeType == types.NodeTypeIt && s.State == types.SpecStateSkipped && slices.Contains(s.Labels(), labelHost) && asked(s.Labels()) {
			left = append(left, s.FullText())
		}
	}
	fmt.Printf("left out, needing the suite's own cluster on this host (label %s): %d specs\n", labelHost, len(left))
	for _, text := range left {
		fmt.Printf("  left out: %s\n", text)
	}
})

// TestProviderFromEnv runs without the suite's cluster:
// go -C test test ./e2e -run 'TestProviderFromEnv|TestWithoutHost'.
func TestProviderFromEnv(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	for _, tc := range []struct {
		cluster, kubeconfig string
		want                provider
		wantErr             string
	}{
		{"", "", localProvider{}, ""},
		{"local", kubeconfig, localProvider{}, ""},
		{"existing", kubeconfig, existingProvider{kubeconfig: kubeconfig}, ""},
		{"existing", "", nil, "must name one file"},
		{"existing", kubeconfig + string(filepath.ListSeparator) + kubeconfig, nil, "must name one file"},
		{"kind", "", nil, "want local or existing"},
	} {
		t.Setenv(envCluster, tc.cluster)
		t.Setenv("KUBECONFIG", tc.kubeconfig)
		got, err := providerFromEnv()
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("E2E_CLUSTER=%q KUBECONFIG=%q: error %v, want one saying %q", tc.cluster, tc.kubeconfig, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("E2E_CLUSTER=%q KUBECONFIG=%q: %#v, %v; want %#v", tc.cluster, tc.kubeconfig, got, err, tc.want)
		}
	}
}

func TestWithoutHost(t *testing.T) {
	for _, tc := range []struct{ filter, want string }{
		{"", "!host"},
		{"install", "(install) && !host"},
		{"tls || faults", "(tls || faults) && !host"},
	} {
		if got := withoutHost(tc.filter); got != tc.want {
			t.Errorf("withoutHost(%q) = %q, want %q", tc.filter, got, tc.want)
		}
		// The filter Ginkgo is given parses, and leaves host specs out.
		match, err := types.ParseLabelFilter(withoutHost(tc.filter))
		if err != nil {
			t.Fatal(err)
		}
		if match([]string{"install", "tls", "faults", labelHost}) {
			t.Errorf("%q runs a spec labelled %s", withoutHost(tc.filter), labelHost)
		}
	}
}
