package localcluster_test

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/example-inc/memcached-operator/test/localcluster"
)

// A cluster with three fake nodes, used through client-go. BinDir defaults to
// $KUBEBUILDER_ASSETS; Dir to a temporary directory that Stop removes.
func Example() {
	ctx := context.Background()
	cluster, err := localcluster.New(localcluster.Options{Nodes: 3})
	if err != nil {
		panic(err)
	}
	if err := cluster.Start(ctx); err != nil {
		panic(err)
	}
	defer func() { _ = cluster.Stop() }()

	cs := kubernetes.NewForConfigOrDie(cluster.RestConfig())
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		panic(err)
	}
	fmt.Println(len(nodes.Items), "nodes; kubeconfig at", cluster.KubeconfigPath())
}

// A fault test: the API server goes away and comes back on the same port,
// with the same data, so existing clients recover.
func ExampleCluster_StopAPIServer() {
	ctx := context.Background()
	cluster, err := localcluster.New(localcluster.Options{})
	if err != nil {
		panic(err)
	}
	if err := cluster.Start(ctx); err != nil {
		panic(err)
	}
	defer func() { _ = cluster.Stop() }()

	if err := cluster.StopAPIServer(); err != nil {
		panic(err)
	}
	// ... assert that the operator under test copes ...
	if err := cluster.StartAPIServer(ctx); err != nil {
		panic(err)
	}
}
