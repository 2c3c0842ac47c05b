package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/example-inc/memcached-operator/certs/certstest"
	"github.com/example-inc/memcached-operator/hack/local-cluster/localcluster"
	"github.com/example-inc/memcached-operator/hack/local-cluster/process"
	"github.com/example-inc/memcached-operator/hack/repo"
	"github.com/example-inc/memcached-operator/test/framework/webhookroute"
)

var (
	// paths are the OLM binaries, CRDs and opm.
	paths tools
	// olmOps are OLM's olm and catalog operators.
	olmOps *olmOperators
)

// OLM's olm and catalog operators run against the suite's cluster, with an
// OpenShift cluster Proxy, for the OLM specs alone: what the installs leave
// (namespaces, the webhook configurations and cluster roles OLM made) goes
// when they end, so that nothing OLM deployed answers for or collides with
// the specs after them.
var _ = Describe("OLM", Ordered, Label(labelHost, labelOLM), func() {
	BeforeAll(func(ctx SpecContext) {
		var missing []string
		paths, missing = toolsFromEnv()
		Expect(missing).To(BeEmpty(), "run make test-e2e, which builds and names them")

		namespaces := names(ctx, &corev1.NamespaceList{})
		// The cluster-scoped kinds OLM makes for an install: its
		// webhooks, the bundle's ClusterRoles and the permissions it
		// lifts to ClusterRoles.
		clusterScoped := []client.ObjectList{
			&admissionregistrationv1.MutatingWebhookConfigurationList{},
			&admissionregistrationv1.ValidatingWebhookConfigurationList{},
			&rbacv1.ClusterRoleList{},
			&rbacv1.ClusterRoleBindingList{},
		}
		before := make([][]string, len(clusterScoped))
		for i, list := range clusterScoped {
			before[i] = names(ctx, list)
		}

		// olm looks for the Proxy API only when it starts, so the Proxy CRD
		// and the cluster Proxy come first.
		start := time.Now()
		// Created, or replaced where another spec made one first
		// (faults_olm_first_rollout_test.go makes the Subscription CRD), and
		// served by discovery when it returns.
		crds, err := envtest.InstallCRDs(cluster.RestConfig(), envtest.CRDInstallOptions{
			Paths: []string{paths.olmCRDs, paths.proxyCRD}, ErrorIfPathMissing: true, MaxTime: time.Minute,
		})
		Expect(err).NotTo(HaveOccurred())
		Expect(crds).NotTo(BeEmpty())
		createClusterProxy(ctx, k8s)
		Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: olmNamespace}})).To(Succeed())

		olmOps = &olmOperators{tools: paths, cluster: cluster.local, dir: workDir}
		Expect(olmOps.startOLM()).To(Succeed())
		Expect(olmOps.startCatalog()).To(Succeed())
		DeferCleanup(olmOps.stopAll)
		// Registered after OLM starts, so it runs while OLM still does,
		// which removes what its objects hold (finalizers, webhooks).
		DeferCleanup(func(ctx SpecContext) {
			deleteNamespaces(ctx, slices.DeleteFunc(names(ctx, &corev1.NamespaceList{}), func(n string) bool {
				return slices.Contains(namespaces, n)
			})...)
			for i, list := range clusterScoped {
				deleteNew(ctx, before[i], list)
			}
		}, NodeTimeout(5*time.Minute))
		GinkgoWriter.Printf("%d CRDs, cluster Proxy and OLM up in %s\n", len(crds), time.Since(start).Round(time.Millisecond))
	}, NodeTimeout(5*time.Minute))

	olmInstallSpecs()
	disconnectedInstallSpecs()
})

// names are the names of the objects of list's kind.
func names(ctx SpecContext, list client.ObjectList) []string {
	GinkgoHelper()
	var out []string
	for _, o := range listed(ctx, list) {
		out = append(out, o.GetName())
	}
	return out
}

// listed lists the objects of list's kind.
func listed(ctx SpecContext, list client.ObjectList) []client.Object {
	GinkgoHelper()
	Expect(k8s.List(ctx, list)).To(Succeed())
	items, err := apimeta.ExtractList(list)
	Expect(err).NotTo(HaveOccurred())
	out := make([]client.Object, 0, len(items))
	for _, o := range items {
		out = append(out, o.(client.Object))
	}
	return out
}

// deleteNew deletes the objects of list's kind that are not in before.
func deleteNew(ctx SpecContext, before []string, list client.ObjectList) {
	GinkgoHelper()
	for _, o := range listed(ctx, list) {
		if !slices.Contains(before, o.GetName()) {
			Expect(client.IgnoreNotFound(k8s.Delete(ctx, o))).To(Succeed())
		}
	}
}

// tools are the binaries and manifests the OLM specs need besides the
// control plane, as `make test-e2e` passes them.
type tools struct {
	// olm and catalog are OLM's two operators (OLM_BIN_DIR).
	olm, catalog string
	// olmCRDs is OLM's deploy/chart/crds (OLM_CRDS_DIR).
	olmCRDs string
	// proxyCRD is config.openshift.io's Proxy CRD (OPENSHIFT_PROXY_CRD).
	proxyCRD string
	// opm renders (through make catalog) and serves the catalog (OPM).
	opm string
}

// toolsFromEnv reads the paths and reports every one that is missing, so
// that a machine without them fails with one clear message.
func toolsFromEnv() (tools, []string) {
	t := tools{
		olm:      filepath.Join(os.Getenv("OLM_BIN_DIR"), "olm"),
		catalog:  filepath.Join(os.Getenv("OLM_BIN_DIR"), "catalog"),
		olmCRDs:  os.Getenv("OLM_CRDS_DIR"),
		proxyCRD: os.Getenv("OPENSHIFT_PROXY_CRD"),
		opm:      os.Getenv("OPM"),
	}
	var missing []string
	for name, path := range map[string]string{
		"OLM_BIN_DIR/olm": t.olm, "OLM_BIN_DIR/catalog": t.catalog, "OLM_CRDS_DIR": t.olmCRDs,
		"OPENSHIFT_PROXY_CRD": t.proxyCRD, "OPM": t.opm,
	} {
		if _, err := os.Stat(path); path == "" || err != nil {
			missing = append(missing, fmt.Sprintf("%s (%q)", name, path))
		}
	}
	return t, missing
}

// catalogSourceName is the suite's CatalogSource, in olmNamespace.
const catalogSourceName = "memcached-operator-catalog"

// serveCatalog writes the file-based catalog of bundleDirs (oldest first)
// into the work directory's catalog-<name> by running `make catalog`, the
// target that makes the published catalog, so the two cannot drift: opm
// render of each bundle directory (image fields empty, the manifests inside
// the catalog), an olm.package blob, and the channels fast and stable, in
// which each entry carries the replaces and olm.skipRange of its bundle's
// CSV; then opm validate. It serves the catalog with `opm serve`, logging
// to opm-<name>.log, at a free port, and returns the server and its gRPC
// address. opm listens on every interface (it has no bind-address flag);
// the CatalogSource dials 127.0.0.1. Its profiling endpoint is off (it
// would take localhost:6060, which a second opm serve or another suite
// would collide on), and its termination log goes to the work directory
// instead of /dev.
func serveCatalog(ctx context.Context, name string, bundleDirs ...string) (*process.Process, string) {
	GinkgoHelper()
	dir := filepath.Join(workDir, "catalog-"+name)
	out, err := exec.CommandContext(ctx, "make", "--no-print-directory", "-C", repo.Root(), "catalog",
		"CATALOG_DIR="+dir, "CATALOG_BUNDLES="+strings.Join(bundleDirs, ","), "OPM="+paths.opm).CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), "make catalog:\n%s", out)
	ports, err := certstest.FreePorts(1)
	Expect(err).NotTo(HaveOccurred())
	p, err := process.Start(process.Spec{
		Path:    paths.opm,
		LogPath: filepath.Join(workDir, "opm-"+name+".log"),
		Args: []string{"serve", dir, "--port=" + strconv.Itoa(ports[0]), "--pprof-addr=",
			"--termination-log=" + filepath.Join(workDir, "opm-"+name+".termination.log")},
		Dir: workDir,
	})
	Expect(err).NotTo(HaveOccurred())
	return p, "127.0.0.1:" + strconv.Itoa(ports[0])
}

// createCatalogSource points OLM at the catalog served at address, as
// CatalogSource name, and waits until OLM's connection to it is READY: a
// grpc source with an address needs no registry pod and no image.
func createCatalogSource(ctx context.Context, name, address string) {
	GinkgoHelper()
	source := &operatorsv1alpha1.CatalogSource{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: olmNamespace},
		Spec: operatorsv1alpha1.CatalogSourceSpec{
			SourceType:  operatorsv1alpha1.SourceTypeGrpc,
			Address:     address,
			DisplayName: "Memcached Operator (test)",
			Publisher:   "memcached-operator test/e2e",
		},
	}
	Expect(k8s.Create(ctx, source)).To(Succeed())
	start := time.Now()
	Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(source), source)).To(Succeed())
		g.Expect(source.Status.GRPCConnectionState).NotTo(BeNil())
		g.Expect(source.Status.GRPCConnectionState.LastObservedState).To(Equal("READY"))
	}).WithContext(ctx).WithTimeout(time.Minute).Should(Succeed())
	GinkgoWriter.Printf("CatalogSource %s READY %s after create\n", name, time.Since(start).Round(time.Millisecond))
}

// csvWebhooks are the webhook configurations OLM made for the install's CSV
// of version: labelled with the CSV's name and namespace.
func csvWebhooks(ctx context.Context, in install, version string) (webhookroute.Webhooks, error) {
	return webhookroute.List(ctx, k8s, client.MatchingLabels{
		"olm.owner": csvName(version), "olm.owner.namespace": in.namespace,
	})
}

// olmNamespace is where olm and catalog run: the global catalog namespace,
// which is where the suite's CatalogSource lives.
const olmNamespace = "olm"

// olmStopTimeout is how long OLM's operators get to exit on SIGTERM.
const olmStopTimeout = 30 * time.Second

// olmOperators runs OLM's two operators as host processes, as the recipe in
// ../shared/toolchain.md does; both run throughout the OLM specs.
type olmOperators struct {
	tools   tools
	cluster *localcluster.Cluster
	// dir holds the logs and olm's serving certificate.
	dir string

	olm, catalog *process.Process
}

// spec runs an OLM binary against the cluster, logging to dir/<name>.log.
func (o *olmOperators) spec(binary, name string, args ...string) process.Spec {
	return process.Spec{
		Path: binary, Args: args, Dir: o.dir, LogPath: filepath.Join(o.dir, name+".log"),
		Env: append(os.Environ(), "KUBECONFIG="+o.cluster.KubeconfigPath()),
	}
}

// olmArgs: both operators serve health and metrics on a fixed port, :8080
// without TLS and :8443 with it, so olm gets a certificate from the cluster's
// CA (and, as --tls-cert requires, a client CA) to keep out of catalog's way.
func (o *olmOperators) olmArgs() ([]string, error) {
	cert, key, ca := filepath.Join(o.dir, "olm-tls.crt"), filepath.Join(o.dir, "olm-tls.key"), filepath.Join(o.dir, "cluster-ca.crt")
	if _, err := os.Stat(cert); errors.Is(err, os.ErrNotExist) {
		certPEM, keyPEM, err := o.cluster.IssueServingCertificate("localhost")
		if err != nil {
			return nil, err
		}
		if err := errors.Join(os.WriteFile(cert, certPEM, 0o600), os.WriteFile(key, keyPEM, 0o600),
			os.WriteFile(ca, o.cluster.CACertPEM(), 0o600)); err != nil {
			return nil, err
		}
	}
	return []string{"--namespace=" + olmNamespace, "--writeStatusName=",
		"--tls-cert=" + cert, "--tls-key=" + key, "--client-ca=" + ca}, nil
}

// startOLM starts olm-operator, logging to olm.log.
func (o *olmOperators) startOLM() error {
	args, err := o.olmArgs()
	if err != nil {
		return err
	}
	o.olm, err = process.Start(o.spec(o.tools.olm, "olm", args...))
	return err
}

func (o *olmOperators) startCatalog() error {
	var err error
	o.catalog, err = process.Start(o.spec(o.tools.catalog, "catalog", "--namespace="+olmNamespace, "--writeStatusName="))
	return err
}

func (o *olmOperators) stopAll() error {
	return errors.Join(o.olm.Stop(olmStopTimeout), o.catalog.Stop(olmStopTimeout))
}

// The cluster-wide proxy, as an OpenShift cluster publishes it. The
// password is what the operator's log must never show.
const (
	proxyPassword = "s3cr3t-pw"
	httpProxy     = "http://olmuser:" + proxyPassword + "@proxy.example.com:3128"
	httpsProxy    = "http://olmuser:" + proxyPassword + "@proxy.example.com:3129"
	noProxy       = ".cluster.local,.svc,10.96.0.0/16,127.0.0.1,localhost"
)

// clusterProxyEnv is what OLM injects into the operator's containers from
// the Proxy status: the three upper-case names only.
func clusterProxyEnv() map[string]string {
	return map[string]string{"HTTP_PROXY": httpProxy, "HTTPS_PROXY": httpsProxy, "NO_PROXY": noProxy}
}

// memcachedProxyEnv is what the operator puts into every memcached
// container (controllers/proxyenv): each variable in upper and lower case.
func memcachedProxyEnv() map[string]string {
	return map[string]string{
		"HTTP_PROXY": httpProxy, "HTTPS_PROXY": httpsProxy, "NO_PROXY": noProxy,
		"http_proxy": httpProxy, "https_proxy": httpsProxy, "no_proxy": noProxy,
	}
}

var proxyGVK = schema.GroupVersionKind{Group: "config.openshift.io", Version: "v1", Kind: "Proxy"}

// createClusterProxy creates the Proxy `cluster` and sets its status, which
// is what olm reads (on OpenShift the network operator copies the spec there,
// adding the cluster's own networks to noProxy). The status goes through the
// status subresource: a create drops it.
func createClusterProxy(ctx context.Context, c client.Client) {
	proxy := &unstructured.Unstructured{}
	proxy.SetGroupVersionKind(proxyGVK)
	proxy.SetName("cluster")
	fields := map[string]any{"httpProxy": httpProxy, "httpsProxy": httpsProxy, "noProxy": noProxy}
	ExpectWithOffset(1, unstructured.SetNestedField(proxy.Object, fields, "spec")).To(Succeed())
	ExpectWithOffset(1, c.Create(ctx, proxy)).To(Succeed())
	ExpectWithOffset(1, unstructured.SetNestedField(proxy.Object, fields, "status")).To(Succeed())
	ExpectWithOffset(1, c.Status().Update(ctx, proxy)).To(Succeed())

	got := &unstructured.Unstructured{}
	got.SetGroupVersionKind(proxyGVK)
	ExpectWithOffset(1, c.Get(ctx, client.ObjectKey{Name: "cluster"}, got)).To(Succeed())
	status, _, _ := unstructured.NestedStringMap(got.Object, "status")
	ExpectWithOffset(1, status).To(Equal(map[string]string{"httpProxy": httpProxy, "httpsProxy": httpsProxy, "noProxy": noProxy}))
}

// csvName is the CSV name operator-sdk gives a version of this package.
func csvName(version string) string { return "memcached-operator.v" + version }

// skipRange is the olm.skipRange make bundle gives a version: every older
// one upgrades straight to it.
func skipRange(version string) string { return ">=0.0.0 <" + version }

// nextBundle copies the bundle directory src to dst as version to, and
// returns the version it replaces. The copy is what
// `make bundle VERSION=<to> PREVIOUS_VERSION=<from> IMG=<operator image>:v<to>`
// writes; the suite cannot run make bundle itself, because it rewrites the
// committed bundle/, bundle.Dockerfile and config/manifests. The transform,
// and nothing else:
//   - the CSV's metadata.name memcached-operator.v<from> becomes
//     memcached-operator.v<to>, and spec.version <to>;
//   - the upgrade edges hack/bundle.sh writes: spec.replaces
//     memcached-operator.v<from>, and the olm.skipRange annotation
//     ">=0.0.0 <<to>" (make catalog copies both into the channel entries);
//   - the operator image's tag v<from> becomes v<to> wherever the CSV names
//     it (the containerImage annotation, the Deployment, relatedImages), so
//     the upgrade really changes the operator's pod template.
//
// The CRD, RBAC, Services and metadata/annotations.yaml are copied as they
// are.
func nextBundle(src, dst, to string) (from string, err error) {
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		return "", err
	}
	path, csv, err := readBundleCSV(dst)
	if err != nil {
		return "", err
	}
	from, err = csvVersion(csv)
	if err != nil {
		return "", err
	}
	oldImage, err := bundleImage(src)
	if err != nil {
		return "", err
	}
	if !strings.HasSuffix(oldImage, ":v"+from) {
		return "", fmt.Errorf("containerImage %q is not tagged v%s", oldImage, from)
	}
	newImage := strings.TrimSuffix(oldImage, from) + to

	csv.SetName(csvName(to))
	if err := unstructured.SetNestedField(csv.Object, to, "spec", "version"); err != nil {
		return "", err
	}
	if err := unstructured.SetNestedField(csv.Object, csvName(from), "spec", "replaces"); err != nil {
		return "", err
	}
	if err := unstructured.SetNestedField(csv.Object, skipRange(to), "metadata", "annotations", "olm.skipRange"); err != nil {
		return "", err
	}
	out, err := sigsyaml.Marshal(csv.Object)
	if err != nil {
		return "", err
	}
	// containerImage, the Deployment's container and relatedImages.
	if n := strings.Count(string(out), oldImage); n < 3 {
		return "", fmt.Errorf("the CSV names %s %d times, want at least 3", oldImage, n)
	}
	out = []byte(strings.ReplaceAll(string(out), oldImage, newImage))
	return from, os.WriteFile(path, out, 0o644)
}

// readBundleCSV reads the one CSV of the bundle directory dir.
func readBundleCSV(dir string) (string, *unstructured.Unstructured, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "manifests", "*.clusterserviceversion.yaml"))
	if err != nil || len(paths) != 1 {
		return "", nil, fmt.Errorf("want one CSV in %s/manifests, found %v (%v)", dir, paths, err)
	}
	data, err := os.ReadFile(paths[0])
	if err != nil {
		return "", nil, err
	}
	csv := &unstructured.Unstructured{}
	if err := sigsyaml.Unmarshal(data, &csv.Object); err != nil {
		return "", nil, fmt.Errorf("%s: %w", paths[0], err)
	}
	return paths[0], csv, nil
}

// csvVersion is spec.version of a memcached-operator.v<version> CSV.
func csvVersion(csv *unstructured.Unstructured) (string, error) {
	v, _, _ := unstructured.NestedString(csv.Object, "spec", "version")
	if v == "" || csv.GetName() != csvName(v) {
		return "", fmt.Errorf("CSV %s has spec.version %q: not a memcached-operator.v<version> CSV", csv.GetName(), v)
	}
	return v, nil
}

// bundleVersion is the version of the bundle directory dir.
func bundleVersion(dir string) (string, error) {
	_, csv, err := readBundleCSV(dir)
	if err != nil {
		return "", err
	}
	return csvVersion(csv)
}

// bundleImage is the operator image the CSV of the bundle directory dir
// deploys (its containerImage annotation, which make bundle keeps equal to
// the Deployment's).
func bundleImage(dir string) (string, error) {
	_, csv, err := readBundleCSV(dir)
	if err != nil {
		return "", err
	}
	img := csv.GetAnnotations()["containerImage"]
	if img == "" {
		return "", fmt.Errorf("CSV %s has no containerImage annotation", csv.GetName())
	}
	return img, nil
}
