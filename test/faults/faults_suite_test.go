package faults

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
	"github.com/example-inc/memcached-operator/test/framework/harness"
	"github.com/example-inc/memcached-operator/test/framework/localcluster"
	"github.com/example-inc/memcached-operator/test/framework/repo"
)

func TestFaults(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Faults Suite")
}

// Sizes of the suite, from the environment so CI and a developer can pick
// them without editing code.
var (
	// crashCRs is the number of Memcached objects in the crash rollout: 200
	// in CI too (the suite takes about two minutes).
	crashCRs = envInt("FAULT_CRS", 200)
	// crashKills is how many times the operator is killed during it.
	crashKills = envInt("FAULT_KILLS", 5)
)

var (
	cluster *localcluster.Cluster
	// k8s is an admin client with rate limits high enough that the test's
	// own creates and lists never queue behind client-go's default 5 QPS.
	k8s client.Client
	// restConfig is the configuration k8s was made from.
	restConfig *rest.Config
	// workDir holds the operator binary, the cluster's state and logs and
	// one log per operator; kept when a spec fails.
	workDir string
	// operatorBinary is the manager, built from this checkout.
	operatorBinary string
)

var _ = BeforeSuite(func(ctx SpecContext) {
	workDir = harness.WorkDir("faults")
	// Client warnings and controller-runtime's own logging (the CRD
	// installer) go to a file, not the test output.
	harness.LogTo(workDir, "test-client.log")
	build := harness.BuildOperator(ctx, workDir)
	start := time.Now()
	cluster = harness.StartCluster(ctx, localcluster.Options{
		Dir: filepath.Join(workDir, "cluster"),
		// A restart of etcd or the API server on this busy machine can
		// take longer than the default two minutes.
		StartTimeout: 4 * time.Minute,
	})

	restConfig = cluster.RestConfig()
	restConfig.QPS, restConfig.Burst = 200, 400
	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(cachev1.AddToScheme(scheme))
	utilruntime.Must(operatorsv1alpha1.AddToScheme(scheme))
	var err error
	k8s, err = client.New(restConfig, client.Options{Scheme: scheme})
	Expect(err).NotTo(HaveOccurred())
	_, err = envtest.InstallCRDs(restConfig, envtest.CRDInstallOptions{
		Paths: []string{repo.CRDDir()}, ErrorIfPathMissing: true,
	})
	Expect(err).NotTo(HaveOccurred())

	operatorBinary = build.Wait(ctx)
	AddReportEntry("cluster up and operator built", time.Since(start).Round(time.Millisecond))
}, NodeTimeout(8*time.Minute))

// envInt reads a positive integer from the environment, or def.
func envInt(name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		panic(fmt.Sprintf("%s=%q: want a positive integer", name, v))
	}
	return n
}
