package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/example-inc/memcached-operator/hack/local-cluster/images"
	"github.com/example-inc/memcached-operator/hack/local-cluster/localcluster"
)

// launch runs the cluster in the foreground until SIGINT or SIGTERM: what
// up starts in the background. It writes the pid file once the cluster is
// ready, its node's images imported, and removes it when every process of
// the cluster has stopped.
func launch(o options) (err error) {
	// Registered before anything starts, so a signal during start-up also
	// ends in a clean shutdown instead of the default abrupt exit.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	if pid, alive := running(o.dir); alive {
		return fmt.Errorf("a local cluster is already running in %s (pid %d)", o.dir, pid)
	}
	opts := o.cluster
	if len(o.images) > 0 && !opts.RealNode {
		return errors.New("--image needs --real-node: a kwok node runs no image")
	}
	opts.Dir, opts.BinDir, opts.KeepState = o.dir, o.controlPlaneDir(), !o.fresh
	cluster, err := localcluster.New(opts)
	if err != nil {
		return err
	}
	begin := time.Now()
	if err := cluster.Start(ctx); err != nil {
		if ctx.Err() != nil {
			// Stopped on request before it was ready; Start has already
			// shut down what it had started.
			fmt.Fprintln(os.Stderr, "local-cluster: interrupted during start-up; stopped")
			return cluster.Stop()
		}
		return err
	}
	defer func() {
		begin := time.Now()
		err = errors.Join(err, cluster.Stop(), removeIfOurs(o.dir))
		if err == nil {
			fmt.Fprintf(os.Stderr, "local-cluster: stopped in %s\n", time.Since(begin).Round(time.Millisecond))
		}
	}()
	if opts.RealNode {
		if err := importPodImages(ctx, cluster, filepath.Join(o.dir, "images")); err != nil {
			return err
		}
		if err := cluster.ImportImages(ctx, o.images...); err != nil {
			return err
		}
	}
	if err := os.WriteFile(pidPath(o.dir), []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644); err != nil {
		return err
	}
	nodes := fmt.Sprintf("%d fake node(s)", cluster.Options().Nodes)
	if opts.RealNode {
		nodes += " and the real node " + localcluster.RealNodeName
	}
	fmt.Fprintf(os.Stderr, "local-cluster: ready in %s with %s; logs in %s\n",
		time.Since(begin).Round(time.Millisecond), nodes, filepath.Join(o.dir, "logs"))
	fmt.Printf("export KUBECONFIG=%s\n", cluster.KubeconfigPath())

	<-ctx.Done()
	// A second signal while stopping should not kill us half-way: shutdown
	// is bounded by the per-process stop timeout anyway.
	signal.Ignore(os.Interrupt, syscall.SIGTERM)
	fmt.Fprintln(os.Stderr, "local-cluster: stopping")
	return nil
}

// importPodImages puts on the real node the images of the pods the operator
// makes, memcached's, the TLS sidecar's and the metrics exporter's: nothing
// is pulled there. It says which variables make the operator use them.
func importPodImages(ctx context.Context, cluster *localcluster.Cluster, dir string) error {
	memcached, err := images.Memcached(dir, images.MemcachedTag)
	if err != nil {
		return fmt.Errorf("the memcached image: %w", err)
	}
	reloader, err := images.TLSReloader(ctx, dir, images.TLSReloaderTag)
	if err != nil {
		return fmt.Errorf("the TLS reloader image: %w", err)
	}
	exporter, err := images.MemcachedExporter(ctx, dir, images.MemcachedExporterTag)
	if err != nil {
		return fmt.Errorf("the memcached exporter image: %w", err)
	}
	if err := cluster.ImportImages(ctx, memcached.Archive, reloader.Archive, exporter.Archive); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "local-cluster: images %s, %s and %s imported; run the operator with "+
		"RELATED_IMAGE_MEMCACHED=%s RELATED_IMAGE_TLS_RELOADER=%s RELATED_IMAGE_MEMCACHED_EXPORTER=%s\n",
		memcached.Ref, reloader.Ref, exporter.Ref, memcached.Ref, reloader.Ref, exporter.Ref)
	return nil
}
