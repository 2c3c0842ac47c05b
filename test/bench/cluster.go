package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/example-inc/memcached-operator/api/v1/gen"
	"github.com/example-inc/memcached-operator/hack/local-cluster/localcluster"
	"github.com/example-inc/memcached-operator/hack/local-cluster/process"
	"github.com/example-inc/memcached-operator/hack/repo"
)

// Namespaces of the bench's objects.
const (
	// setNamespace holds the Memcached set of converge, idle, resize, rss.
	setNamespace = "bench"
	// unrelatedNamespace holds the rss scenario's unrelated pods.
	unrelatedNamespace = "bench-unrelated"
	// webhookNamespace and baselineNamespace hold the webhook scenario's
	// objects, created with and without the webhooks.
	webhookNamespace  = "bench-webhook"
	baselineNamespace = "bench-webhook-baseline"
)

// podsPerNode is how many pods the bench plans per fake node, below the
// node capacity (2000) so the scheduler never runs out of room on a node.
const (
	podsPerNode  = 1500
	nodePodLimit = "2000"
)

// benchClientQPS is the bench's own client rate limit: creates and resizes
// go out as fast as the API server takes them, so the figures measure the
// operator, not the bench.
const (
	benchClientQPS   = 500
	benchClientBurst = 1000
)

// env is the running cluster and the clients the scenarios share.
type env struct {
	cluster *localcluster.Cluster
	// cfg is an admin config with the bench's rate limits.
	cfg    *rest.Config
	client client.Client
	cs     kubernetes.Interface
	scheme *runtime.Scheme
	audit  *auditLog
	// operatorKubeconfig authenticates as operatorUser.
	operatorKubeconfig string
	// nodes is the number of fake nodes.
	nodes int
}

// nodesFor returns how many fake nodes hold pods pods.
func nodesFor(pods int) int {
	return max(1, (pods+podsPerNode-1)/podsPerNode)
}

// startEnv starts a local cluster in dir with an audit log of the operator's
// requests, installs the Memcached CRD and makes the operator's credentials.
func startEnv(ctx context.Context, o options, dir string) (*env, error) {
	policy := filepath.Join(dir, "audit-policy.yaml")
	if err := os.WriteFile(policy, []byte(auditPolicy()), 0o644); err != nil {
		return nil, err
	}
	auditPath := filepath.Join(dir, "audit.log")
	nodes := nodesFor(o.maxPods())
	cluster, err := localcluster.New(localcluster.Options{
		BinDir: o.binDir,
		Dir:    filepath.Join(dir, "cluster"),
		Nodes:  nodes,
		// Pods are what limits a node; CPU and memory never do, as each
		// memcached pod requests 50m and 96Mi.
		NodeCapacity: corev1.ResourceList{
			corev1.ResourceCPU:    resource.MustParse("10000"),
			corev1.ResourceMemory: resource.MustParse("100Ti"),
			corev1.ResourcePods:   resource.MustParse(nodePodLimit),
		},
		ExtraArgs: map[localcluster.Component][]string{
			localcluster.APIServer: {
				"--audit-policy-file=" + policy,
				"--audit-log-path=" + auditPath,
				// One file, never rotated, written before each response.
				"--audit-log-maxsize=0",
				"--audit-log-mode=blocking",
			},
		},
		StartTimeout: 5 * time.Minute,
	})
	if err != nil {
		return nil, err
	}
	e := &env{cluster: cluster, audit: newAuditLog(auditPath), nodes: nodes}
	if err := cluster.Start(ctx); err != nil {
		return e, err
	}

	e.scheme = gen.Scheme()
	e.cfg = cluster.RestConfig()
	e.cfg.QPS, e.cfg.Burst = benchClientQPS, benchClientBurst
	e.cfg.UserAgent = "memcached-operator-bench"
	if e.client, err = client.New(e.cfg, client.Options{Scheme: e.scheme}); err != nil {
		return e, err
	}
	if e.cs, err = kubernetes.NewForConfig(e.cfg); err != nil {
		return e, err
	}
	if err := installCRD(ctx, e.cfg, e.client, setNamespace, unrelatedNamespace, webhookNamespace, baselineNamespace, markerNamespace); err != nil {
		return e, err
	}
	e.operatorKubeconfig = filepath.Join(dir, "operator.kubeconfig")
	// A user of its own in system:masters: authorized as the admin is, but
	// its requests can be told apart in the audit log.
	if err := cluster.WriteUserKubeconfig(e.operatorKubeconfig, operatorUser, "system:masters"); err != nil {
		return e, fmt.Errorf("operator credentials: %w", err)
	}
	return e, nil
}

// installCRD installs the Memcached CRD and makes the namespaces.
func installCRD(ctx context.Context, cfg *rest.Config, c client.Client, namespaces ...string) error {
	if _, err := envtest.InstallCRDs(cfg, envtest.CRDInstallOptions{Paths: []string{repo.CRDDir()}, ErrorIfPathMissing: true}); err != nil {
		return fmt.Errorf("installing the CRD: %w", err)
	}
	for _, ns := range namespaces {
		err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating namespace %s: %w", ns, err)
		}
	}
	return nil
}

func (e *env) stop() error {
	if e == nil || e.cluster == nil {
		return nil
	}
	return e.cluster.Stop()
}

// syncAudit waits until the audit log holds every request completed so far.
func (e *env) syncAudit(ctx context.Context) error {
	return e.audit.sync(ctx, func(ctx context.Context, ns, name string) error {
		_, err := e.cs.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err
	})
}

// requests returns the operator's requests that arrived in [from, to),
// once the audit log has caught up.
func (e *env) requests(ctx context.Context, from, to time.Time) (requestCounts, error) {
	if err := e.syncAudit(ctx); err != nil {
		return nil, err
	}
	return e.audit.requests(from, to), nil
}

func (e *env) apiServerMetrics(ctx context.Context) (metrics, error) {
	raw, err := e.cs.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return metrics{}, fmt.Errorf("scraping kube-apiserver metrics: %w", err)
	}
	return parseMetrics(string(raw))
}

// apiServerSnapshot is kube-apiserver's metrics and CPU at one moment.
type apiServerSnapshot struct {
	metrics metrics
	usage   process.Usage
}

// apiServerSnapshot scrapes kube-apiserver's metrics and reads its CPU from
// /proc.
func (e *env) apiServerSnapshot(ctx context.Context) (apiServerSnapshot, error) {
	pid, ok := e.cluster.PIDs()[localcluster.APIServer]
	if !ok {
		return apiServerSnapshot{}, errors.New("kube-apiserver is not running")
	}
	usage, err := process.ReadUsage(pid)
	if err != nil {
		return apiServerSnapshot{}, err
	}
	m, err := e.apiServerMetrics(ctx)
	return apiServerSnapshot{metrics: m, usage: usage}, err
}
