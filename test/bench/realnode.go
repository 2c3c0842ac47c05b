package main

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/example-inc/memcached-operator/api/v1/gen"
	"github.com/example-inc/memcached-operator/hack/local-cluster/images"
	"github.com/example-inc/memcached-operator/hack/local-cluster/localcluster"
	"github.com/example-inc/memcached-operator/test/framework/operatorproc"
)

// realNode is the local cluster with the real node that the memcached,
// memory and rollout scenarios share: it starts once, for the first of them, and stops
// after the last, before the control plane's scenarios start theirs.
type realNode struct {
	cluster *localcluster.Cluster
	client  client.Client
}

// realNode starts the cluster with the real node, imports the memcached
// image, installs the CRD and the scenarios' namespaces, or returns the one
// already started.
func (b *bench) realNode(ctx context.Context) (*realNode, error) {
	if b.node != nil {
		return b.node, nil
	}
	dir := filepath.Join(b.dir, "realnode")
	cluster, err := localcluster.New(localcluster.Options{
		BinDir: b.o.binDir, Dir: filepath.Join(dir, "cluster"), RealNode: true, StartTimeout: 5 * time.Minute,
	})
	if err != nil {
		return nil, err
	}
	img, err := images.Memcached(filepath.Join(dir, "images"), images.MemcachedTag)
	if err != nil {
		return nil, err
	}
	// Monitoring is on by default: the exporter sidecar's image too, or the
	// node would try to pull it.
	exporter, err := images.MemcachedExporter(ctx, filepath.Join(dir, "images"), images.MemcachedExporterTag)
	if err != nil {
		return nil, err
	}
	if err := cluster.Start(ctx); err != nil {
		return nil, fmt.Errorf("starting the real node's cluster: %w", err)
	}
	node := &realNode{cluster: cluster}
	// From here on, stopRealNode stops the cluster whatever fails next.
	b.node = node
	if err := cluster.ImportImages(ctx, img.Archive, exporter.Archive); err != nil {
		return nil, err
	}
	if node.client, err = realNodeClient(ctx, cluster); err != nil {
		return nil, err
	}
	if cs, err := kubernetes.NewForConfig(cluster.RestConfig()); err == nil {
		if v, err := cs.Discovery().ServerVersion(); err == nil {
			b.res.Machine.Kubernetes = v.GitVersion
		}
	}
	return node, nil
}

// realNodeOperator starts the operator built for the bench against the
// real node's cluster, watching namespace, serving its webhooks as make run
// does, with the node's images and env added; its log and certificates go
// in dir.
func (b *bench) realNodeOperator(ctx context.Context, node *realNode, dir, namespace string, env []string) (*operatorproc.Operator, error) {
	op, err := operatorproc.Start(ctx, operatorproc.Options{
		Binary: b.bin, Kubeconfig: node.cluster.KubeconfigPath(), LogPath: filepath.Join(dir, "operator.log"),
		Webhooks: operatorproc.WebhooksLocal, WebhookCertDir: filepath.Join(dir, "webhook-certs"),
		WatchNamespace: namespace,
		Env: slices.Concat(b.deployedEnv,
			[]string{"RELATED_IMAGE_MEMCACHED=" + images.MemcachedTag, "RELATED_IMAGE_MEMCACHED_EXPORTER=" + images.MemcachedExporterTag}, env),
	})
	if err != nil {
		return nil, fmt.Errorf("starting the operator: %w", err)
	}
	return op, nil
}

func (b *bench) stopRealNode() error {
	if b.node == nil {
		return nil
	}
	err := b.node.cluster.Stop()
	b.node = nil
	return err
}

// realNodeClient installs the CRD and the scenarios' namespaces and
// returns a client of the cluster.
func realNodeClient(ctx context.Context, cluster *localcluster.Cluster) (client.Client, error) {
	c, err := client.New(cluster.RestConfig(), client.Options{Scheme: gen.Scheme()})
	if err != nil {
		return nil, err
	}
	return c, installCRD(ctx, cluster.RestConfig(), c, memcachedNamespace, memoryNamespace, rolloutNamespace)
}
