package harness

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/example-inc/memcached-operator/hack/local-cluster/localcluster"
	"github.com/example-inc/memcached-operator/hack/repo"
)

// Cluster is what a suite needs of the cluster it runs on, whoever started
// it: a *localcluster.Cluster, or an ExistingCluster.
type Cluster interface {
	KubeconfigPath() string
	RestConfig() *rest.Config
}

// ExistingCluster is the cluster of the kubeconfig file at path, in its
// current context: one the suite did not start and does not stop.
func ExistingCluster(path string) (Cluster, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return nil, fmt.Errorf("the cluster of kubeconfig %s: %w", path, err)
	}
	return existingCluster{path: path, cfg: cfg}, nil
}

type existingCluster struct {
	path string
	cfg  *rest.Config
}

func (c existingCluster) KubeconfigPath() string { return c.path }

// RestConfig is a copy, which the caller may change.
func (c existingCluster) RestConfig() *rest.Config { return rest.CopyConfig(c.cfg) }

// ipForwardPath is the sysctl a real node turns on for its bridge.
const ipForwardPath = "/proc/sys/net/ipv4/ip_forward"

// StartCluster starts a local cluster with opts, stopped when the suite
// ends. BinDir defaults to the built control plane; a missing binary fails
// the suite, naming what to build. With a real node, what the stopped
// cluster left on the machine fails the suite too, and so does
// net.ipv4.ip_forward not restored.
func StartCluster(ctx context.Context, opts localcluster.Options) *localcluster.Cluster {
	ginkgo.GinkgoHelper()
	if opts.BinDir == "" {
		opts.BinDir = repo.ControlPlaneDir()
	}
	var cluster *localcluster.Cluster
	if opts.RealNode {
		ipForward, err := os.ReadFile(ipForwardPath)
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		// Registered before the cluster's Stop, so it runs after it.
		ginkgo.DeferCleanup(func() {
			if cluster == nil {
				return // never made: nothing started
			}
			left, err := localcluster.NodeLeftovers(cluster.Dir())
			gomega.Expect(err).NotTo(gomega.HaveOccurred())
			gomega.Expect(left).To(gomega.BeEmpty(), "what the stopped cluster left on the machine")
			gomega.Expect(os.ReadFile(ipForwardPath)).To(gomega.Equal(ipForward), "net.ipv4.ip_forward restored")
		})
	}
	start := time.Now()
	var err error
	cluster, err = localcluster.New(opts)
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	gomega.Expect(cluster.Start(ctx)).To(gomega.Succeed())
	ginkgo.DeferCleanup(cluster.Stop)
	ginkgo.GinkgoWriter.Printf("local cluster up in %s\n", time.Since(start).Round(time.Millisecond))
	return cluster
}

// PodReady reports whether p's Ready condition is True.
func PodReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
