package e2e

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	cmapi "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	. "github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"
	. "github.com/onsi/gomega"
	operatorsv1 "github.com/operator-framework/api/pkg/operators/v1"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilversion "k8s.io/apimachinery/pkg/util/version"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
	"github.com/example-inc/memcached-operator/api/v1/gen"
	"github.com/example-inc/memcached-operator/hack/local-cluster/images"
	"github.com/example-inc/memcached-operator/hack/local-cluster/localcluster"
	"github.com/example-inc/memcached-operator/hack/local-cluster/memcachedproc"
	"github.com/example-inc/memcached-operator/hack/local-cluster/process"
	"github.com/example-inc/memcached-operator/hack/repo"
	"github.com/example-inc/memcached-operator/test/framework/certmanager"
	"github.com/example-inc/memcached-operator/test/framework/harness"
	"github.com/example-inc/memcached-operator/test/framework/manifest"
	"github.com/example-inc/memcached-operator/test/framework/memcache"
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

// realCluster is the suite's cluster, with the CRD installed. Its clients
// know the operator's, cert-manager's, OLM's and the Prometheus Operator's
// types.
type realCluster struct {
	harness.Cluster
	// local is the local cluster the suite started, nil on one it did
	// not: its real node runs every pod that does not tolerate the taint
	// of its one kwok node, with the suite's images imported. Only specs
	// labelled host use it.
	local *localcluster.Cluster
	k8s   client.WithWatch
	cs    kubernetes.Interface
}

// startRealCluster starts it in dir, its node pulling the images of each
// registry host of mirrors from that mirror alone. When the suite ends it is
// stopped, and then nothing of it may be left on the machine.
func startRealCluster(ctx context.Context, dir string, mirrors map[string]string) *realCluster {
	GinkgoHelper()
	start := time.Now()
	c := harness.StartCluster(ctx, localcluster.Options{
		Dir: dir, RealNode: true, RegistryMirrors: mirrors,
		// One kwok node, tainted, for the fault specs' hundreds of pods
		// (fakeMemcached); every other pod runs for real.
		Nodes: 1,
		// A restart of etcd or the API server on this busy machine can
		// take longer than the default two minutes.
		StartTimeout: 4 * time.Minute,
	})
	Expect(c.ImportImages(ctx, memcachedA.Archive, memcachedB.Archive, operatorImage.Archive, tlsReloaderImage.Archive,
		exporterImage.Archive)).To(Succeed())
	rc := newRealCluster(c, c)
	AddReportEntry("real-node cluster up, images imported", time.Since(start).Round(time.Millisecond).String())
	return rc
}

// newRealCluster makes c the suite's cluster, local the local cluster it is
// or nil, and installs the CRD.
func newRealCluster(c harness.Cluster, local *localcluster.Cluster) *realCluster {
	GinkgoHelper()
	scheme := gen.Scheme(cmapi.AddToScheme, monitoringv1.AddToScheme, operatorsv1alpha1.AddToScheme,
		operatorsv1.AddToScheme, apiextensionsv1.AddToScheme)
	// client-go's default of 5 requests a second would pace the fault
	// specs' rollouts of hundreds of objects.
	cfg := c.RestConfig()
	cfg.QPS, cfg.Burst = 200, 400
	k8s, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme})
	Expect(err).NotTo(HaveOccurred())
	cs, err := kubernetes.NewForConfig(c.RestConfig())
	Expect(err).NotTo(HaveOccurred())
	_, err = envtest.InstallCRDs(c.RestConfig(), envtest.CRDInstallOptions{Paths: []string{repo.CRDDir()}, ErrorIfPathMissing: true})
	Expect(err).NotTo(HaveOccurred())
	return &realCluster{Cluster: c, local: local, k8s: k8s, cs: cs}
}

// restrictedNamespace creates a namespace that enforces Pod Security
// restricted, as a careful cluster admin would for a cache tier. It is
// deleted, with what is in it, when the calling container or spec ends.
func (c *realCluster) restrictedNamespace(ctx context.Context, name string) {
	GinkgoHelper()
	c.namespace(ctx, name, map[string]string{
		"pod-security.kubernetes.io/enforce":         "restricted",
		"pod-security.kubernetes.io/enforce-version": "latest",
	})
}

// namespace creates a namespace with labels, deleted with what is in it
// when the calling container or spec ends: the pods of one spec do not run
// on into the next, which shares the node.
func (c *realCluster) namespace(ctx context.Context, name string, labels map[string]string) {
	GinkgoHelper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	Expect(c.k8s.Create(ctx, ns)).To(Succeed())
	DeferCleanup(func(ctx SpecContext) {
		Expect(client.IgnoreNotFound(c.k8s.Delete(ctx, ns))).To(Succeed())
	})
}

// podsOf selects the pods of mc by the labels the operator gives them.
func podsOf(mc *cachev1.Memcached) client.MatchingLabels {
	return client.MatchingLabels{"app.kubernetes.io/name": "memcached", "app.kubernetes.io/instance": mc.Name}
}

// pods are a Memcached's pods that serve or will serve: not terminating,
// not finished. Sorted by name.
func (c *realCluster) pods(ctx context.Context, mc *cachev1.Memcached) ([]corev1.Pod, error) {
	var list corev1.PodList
	if err := c.k8s.List(ctx, &list, client.InNamespace(mc.Namespace), podsOf(mc)); err != nil {
		return nil, err
	}
	var out []corev1.Pod
	for _, p := range list.Items {
		if p.DeletionTimestamp == nil && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// serving waits until mc has exactly n pods, every one Running and Ready
// with image (on the real node of a local cluster), and mc's status says
// so: readyReplicas n, Available with every pod ready, not Degraded, and
// status.nodes the names of those pods. It returns them.
func (c *realCluster) serving(ctx context.Context, mc *cachev1.Memcached, n int, image string) []corev1.Pod {
	GinkgoHelper()
	var pods []corev1.Pod
	eventually(ctx, func(g Gomega) {
		var err error
		pods, err = c.pods(ctx, mc)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(pods).To(HaveLen(n))
		var names []string
		for _, p := range pods {
			if c.local != nil {
				g.Expect(p.Spec.NodeName).To(Equal(localcluster.RealNodeName), "pod %s", p.Name)
			}
			g.Expect(p.Status.Phase).To(Equal(corev1.PodRunning), "pod %s", p.Name)
			g.Expect(harness.PodReady(&p)).To(BeTrue(), "pod %s ready", p.Name)
			g.Expect(p.Spec.Containers[0].Image).To(Equal(image), "pod %s", p.Name)
			names = append(names, p.Name)
		}
		got := &cachev1.Memcached{}
		g.Expect(c.k8s.Get(ctx, client.ObjectKeyFromObject(mc), got)).To(Succeed())
		g.Expect(got.Status.ReadyReplicas).To(BeEquivalentTo(n))
		g.Expect(got.Status.Nodes).To(Equal(names))
		g.Expect(got.Status.Endpoint).To(Equal(fmt.Sprintf("%s.%s.svc:11211", mc.Name, mc.Namespace)), "where clients connect")
		ready := fmt.Sprintf("%d of %d pods ready", n, n)
		if n == 1 {
			ready = "1 of 1 pod ready"
		}
		g.Expect(got.Status.Conditions).To(ContainElements(
			And(HaveField("Type", cachev1.ConditionAvailable), HaveField("Status", metav1.ConditionTrue),
				HaveField("Reason", cachev1.ReasonAllReplicasReady), HaveField("Message", ready)),
			And(HaveField("Type", cachev1.ConditionDegraded), HaveField("Status", metav1.ConditionFalse),
				HaveField("Reason", cachev1.ReasonReconciled), HaveField("Message", "all objects applied"))))
	}).Should(Succeed())
	return pods
}

// restrictedClient are kubectl run's flags that make the client pod one
// that Pod Security restricted admits, whatever user its image names.
var restrictedClient = []string{"--override-type=strategic", "--overrides=" + `{"spec":{"securityContext":{"runAsNonRoot":true,"runAsUser":65534,"seccompProfile":{"type":"RuntimeDefault"}},` +
	`"containers":[{"name":"mc-client","securityContext":{"allowPrivilegeEscalation":false,"capabilities":{"drop":["ALL"]}}}]}}`}

// throughClient sends commands to memcached at endpoint (host:port, as
// status.endpoint gives it) from a client pod in ns, with the README's
// client command (busybox's nc) and runArgs added to kubectl run's flags
// (restrictedClient in a restricted namespace), and returns what memcached
// answered. The commands go to nc through kubectl's stdin: nc waits for
// them, so kubectl is attached before anything is said. (A pod that runs a
// script of its own may end before kubectl attaches, and its output is
// lost.)
func (c *realCluster) throughClient(ctx context.Context, ns, endpoint string, commands []byte, runArgs ...string) (string, error) {
	host, port, err := net.SplitHostPort(endpoint)
	if err != nil {
		return "", err
	}
	args := append([]string{"-n", ns, "run", "mc-client", "--rm", "-i", "--restart=Never", "--image=" + clientImage}, runArgs...)
	out, err := harness.Kubectl(ctx, c.KubeconfigPath(), commands, append(args, "--", "nc", host, port)...)
	if err != nil {
		return "", fmt.Errorf("%w\n%s", err, out)
	}
	return string(out), nil
}

// relatedImageEnv points the operator's RELATED_IMAGE_* variables at the
// images the node has: it pulls nothing.
func relatedImageEnv() []string {
	return []string{
		"RELATED_IMAGE_MEMCACHED=" + memcachedA.Ref,
		"RELATED_IMAGE_MEMCACHED_EXPORTER=" + exporterImage.Ref,
		"RELATED_IMAGE_TLS_RELOADER=" + tlsReloaderImage.Ref,
	}
}

// startOperator runs the operator on the host against c, watching ns, with
// its webhooks in local mode, the images of relatedImageEnv and env added
// to its environment (the last value of a variable wins); name keeps its
// log and webhook certificates apart from other specs'. It reads a warming
// pod's counters every 250 ms, not every 5 s: the specs' rollouts wait a
// window or two for each new pod.
func (c *realCluster) startOperator(ctx context.Context, name, ns string, env ...string) (*operatorproc.Operator, error) {
	env = append(append(relatedImageEnv(), "WARMUP_INTERVAL=250ms"), env...)
	return operatorproc.Start(ctx, operatorproc.Options{
		Binary:         operatorBinary,
		Kubeconfig:     c.KubeconfigPath(),
		LogPath:        filepath.Join(workDir, name+".log"),
		Webhooks:       operatorproc.WebhooksLocal,
		WebhookCertDir: filepath.Join(workDir, name+"-webhook-certs"),
		WatchNamespace: ns,
		Env:            env,
	})
}

// operatorIn creates ns, restricted, and runs an operator watching it
// (startOperator) until the calling container ends.
func (c *realCluster) operatorIn(ctx context.Context, name, ns string, env ...string) *operatorproc.Operator {
	GinkgoHelper()
	c.restrictedNamespace(ctx, ns)
	op, err := c.startOperator(ctx, name, ns, env...)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() error { return op.Stop(30 * time.Second) })
	return op
}

// tailOnFailure prints the end of *op's log after each spec of the calling
// container that fails.
func tailOnFailure(op **operatorproc.Operator) {
	AfterEach(func() {
		if CurrentSpecReport().Failed() && *op != nil {
			GinkgoWriter.Println((*op).Tail(40))
		}
	})
}

// memcachedPID is the host process id of the memcached in pod.
func (c *realCluster) memcachedPID(ctx context.Context, pod corev1.Pod) int {
	GinkgoHelper()
	pid := c.containerPID(ctx, pod, "memcached")
	comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	Expect(err).NotTo(HaveOccurred())
	Expect(strings.TrimSpace(string(comm))).To(Equal("memcached"))
	return pid
}

// containerPID is the host's PID of the first process of pod's container.
func (c *realCluster) containerPID(ctx context.Context, pod corev1.Pod, container string) int {
	GinkgoHelper()
	id := localcluster.ContainerStatus(&pod, container).ContainerID
	Expect(id).NotTo(BeEmpty(), "pod %s has a %s container", pod.Name, container)
	pid, err := c.local.ContainerPID(ctx, id)
	Expect(err).NotTo(HaveOccurred())
	return pid
}

// environ is a process's environment, read from the host.
func environ(pid int) map[string]string {
	GinkgoHelper()
	env, err := process.ReadEnviron(pid)
	Expect(err).NotTo(HaveOccurred())
	return env
}

// serves stores an item in the memcached of pod through its pod IP, reads
// it back, and returns the settings memcached runs with.
func serves(ctx context.Context, pod corev1.Pod, size int) map[string]string {
	GinkgoHelper()
	Expect(pod.Status.PodIP).NotTo(BeEmpty())
	mc, err := memcache.Dial(ctx, pod.Status.PodIP+":11211")
	Expect(err).NotTo(HaveOccurred(), "pod %s", pod.Name)
	defer func() { _ = mc.Close() }()
	value := []byte(strings.Repeat(pod.Name[len(pod.Name)-5:], size/5+1)[:size])
	Expect(mc.Set("node-suite", value)).To(Succeed(), "pod %s", pod.Name)
	Expect(mc.Get("node-suite")).To(Equal(value), "pod %s", pod.Name)
	settings, err := mc.StatsSettings()
	Expect(err).NotTo(HaveOccurred())
	return settings
}

// releaseOf is the memcached release pod's memcached reports (stats
// version).
func releaseOf(ctx context.Context, pod corev1.Pod) string {
	GinkgoHelper()
	mc, err := memcache.Dial(ctx, pod.Status.PodIP+":11211")
	Expect(err).NotTo(HaveOccurred(), "pod %s", pod.Name)
	defer func() { _ = mc.Close() }()
	stats, err := mc.Stats()
	Expect(err).NotTo(HaveOccurred(), "pod %s", pod.Name)
	return stats["version"]
}
