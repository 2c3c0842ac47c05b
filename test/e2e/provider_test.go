package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"
	. "github.com/onsi/gomega"
	"k8s.io/client-go/kubernetes"

	"github.com/example-inc/memcached-operator/hack/local-cluster/images"
	"github.com/example-inc/memcached-operator/test/framework/harness"
)

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
