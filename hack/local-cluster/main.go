package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/example-inc/memcached-operator/hack/local-cluster/images"
	"github.com/example-inc/memcached-operator/hack/local-cluster/localcluster"
	"github.com/example-inc/memcached-operator/hack/local-cluster/repo"
)

type options struct {
	dir     string
	cluster localcluster.Options
	// cleanup removes what a killed real node left, instead of starting a
	// cluster.
	cleanup bool
}

func parseFlags(args []string) (options, error) {
	var o options
	binDir := repo.ControlPlaneDir()
	fs := flag.NewFlagSet("local-cluster", flag.ContinueOnError)
	fs.StringVar(&o.dir, "dir", ".local-cluster", "directory for the kubeconfig, pid file, logs and cluster state")
	fs.StringVar(&o.cluster.BinDir, "bin-dir", binDir, "directory holding etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok (default $"+localcluster.BinDirEnv+" if set)")
	fs.IntVar(&o.cluster.Nodes, "nodes", 0, "number of fake (kwok) nodes (default 1, or 0 with --real-node)")
	fs.BoolVar(&o.cluster.RealNode, "real-node", false, "add a node that runs pods for real (kubelet, containerd, kube-proxy; needs root)")
	fs.BoolVar(&o.cleanup, "cleanup", false, "start nothing: remove what a real node whose launcher was killed left on this machine (containers, mounts, the bridge, iptables rules)")
	fresh := fs.Bool("fresh", false, "start an empty cluster, discarding the objects an earlier one in --dir left (default: keep them)")
	fs.StringVar(&o.cluster.StagesFile, "stages", "", "kwok stages file (default <bin-dir>/kwok-stages.yaml)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	o.cluster.KeepState = !*fresh
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	if o.cluster.Nodes < 0 {
		return o, fmt.Errorf("--nodes must not be negative, got %d", o.cluster.Nodes)
	}
	abs, err := filepath.Abs(o.dir)
	if err != nil {
		return o, err
	}
	o.dir, o.cluster.Dir = abs, abs
	return o, nil
}

func main() {
	o, err := parseFlags(os.Args[1:])
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "local-cluster:", err)
		os.Exit(2)
	}
	if o.cleanup {
		err = localcluster.RemoveNodeLeftovers(o.cluster.BinDir)
		if errors.Is(err, localcluster.ErrNodeRunning) {
			fmt.Fprintln(os.Stderr, "local-cluster:", err)
			return
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "local-cluster: cleanup:", err)
			os.Exit(1)
		}
		fmt.Fprintln(os.Stderr, "local-cluster: nothing of a real node is left on this machine")
		return
	}
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "local-cluster:", err)
		os.Exit(1)
	}
}

func run(o options) (err error) {
	// Registered before anything starts, so a signal during start-up also
	// ends in a clean shutdown instead of the default abrupt exit.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	pidFile := filepath.Join(o.dir, "pid")
	if pid, alive := runningInstance(pidFile); alive {
		return fmt.Errorf("a local cluster is already running in %s (pid %d)", o.dir, pid)
	}

	cluster, err := localcluster.New(o.cluster)
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
		err = errors.Join(err, cluster.Stop(), removeIfOurs(pidFile))
		if err == nil {
			fmt.Fprintf(os.Stderr, "local-cluster: stopped in %s\n", time.Since(begin).Round(time.Millisecond))
		}
	}()
	if o.cluster.RealNode {
		if err := importPodImages(ctx, cluster, filepath.Join(o.dir, "images")); err != nil {
			return err
		}
	}
	if err := os.WriteFile(pidFile, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644); err != nil {
		return err
	}
	nodes := fmt.Sprintf("%d fake node(s)", cluster.Options().Nodes)
	if o.cluster.RealNode {
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

// runningInstance reports the pid recorded in pidFile if that process is
// still alive. A stale file from a killed instance is ignored.
func runningInstance(pidFile string) (int, bool) {
	data, err := os.ReadFile(pidFile)
	if err != nil {
		return 0, false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || pid <= 0 || pid == os.Getpid() {
		return 0, false
	}
	// Signal 0 checks existence; EPERM means it exists but is not ours.
	err = syscall.Kill(pid, 0)
	return pid, err == nil || errors.Is(err, syscall.EPERM)
}

// removeIfOurs deletes the pid file unless another instance has replaced it.
func removeIfOurs(pidFile string) error {
	data, err := os.ReadFile(pidFile)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if strings.TrimSpace(string(data)) != strconv.Itoa(os.Getpid()) {
		return nil
	}
	return os.Remove(pidFile)
}
