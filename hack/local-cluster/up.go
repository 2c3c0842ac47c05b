package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/tools/clientcmd"
)

// startTimeout bounds up's wait for the launcher: a first start with the
// real node builds the images it imports.
const startTimeout = 10 * time.Minute

// up starts the cluster in o.dir in the background, in a session of its
// own: a Ctrl-C of make run, or of the terminal that ran make local-cluster,
// must not reach the cluster, which outlives them. It returns once the
// cluster is ready, saying which node it has and why, and how to use it.
func up(o options) error {
	choice, err := choose(o)
	if err != nil {
		return err
	}
	if len(o.images) > 0 && !choice.real {
		return fmt.Errorf("--image needs the real node; %s", choice.line())
	}
	if pid, alive := running(o.dir); alive {
		if len(o.images) > 0 {
			return fmt.Errorf("a local cluster already runs in %s (pid %d), and --image imports only when it starts: stop it first", o.dir, pid)
		}
		fmt.Printf("local cluster already running (pid %d)\n%s\nexport KUBECONFIG=%s\n", pid, choice.line(), kubeconfigPath(o.dir))
		return nil
	}
	if err := os.MkdirAll(o.dir, 0o755); err != nil {
		return err
	}
	for _, stale := range []string{kubeconfigPath(o.dir), pidPath(o.dir)} {
		if err := os.Remove(stale); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	if err := os.WriteFile(nodeKindPath(o.dir), []byte(choice.kind()+"\n"), 0o644); err != nil {
		return err
	}
	pid, err := startLauncher(o, choice)
	if err != nil {
		return err
	}
	fmt.Printf("local cluster running (pid %d)\n%s\n", pid, choice.line())
	if !o.fresh {
		if n := restoredMemcached(kubeconfigPath(o.dir)); n > 0 {
			fmt.Printf("restored %d Memcached from the last run in %s; LOCAL_CLUSTER_FRESH=true starts the cluster empty\n", n, o.dir)
		}
	}
	fmt.Printf("export KUBECONFIG=%s\n", kubeconfigPath(o.dir))
	return nil
}

// startLauncher runs this binary's run command detached and waits until it
// has written its pid file: the cluster is ready. A launcher that fails
// says why in its log, whose end the error carries; one that is not ready
// in time is stopped.
func startLauncher(o options, choice nodeChoice) (int, error) {
	self, err := os.Executable()
	if err != nil {
		return 0, err
	}
	args := []string{"run", "--dir", o.dir, "--bin-dir", o.controlPlaneDir()}
	if choice.real {
		args = append(args, "--real-node")
	}
	if o.fresh {
		args = append(args, "--fresh")
	}
	for _, image := range o.images {
		args = append(args, "--image", image)
	}
	log, err := os.Create(launcherLog(o.dir))
	if err != nil {
		return 0, err
	}
	defer func() { _ = log.Close() }()
	cmd := exec.Command(self, args...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	timeout := time.After(startTimeout)
	for {
		select {
		case err := <-exited:
			return 0, fmt.Errorf("local cluster failed to start (%v); see %s and %s:\n%s",
				err, launcherLog(o.dir), filepath.Join(o.dir, "logs"), tail(launcherLog(o.dir), 20))
		case <-timeout:
			_ = cmd.Process.Signal(syscall.SIGTERM)
			return 0, fmt.Errorf("local cluster did not come up within %s, so it is stopped; see %s", startTimeout, launcherLog(o.dir))
		case <-tick.C:
			if pid, alive := running(o.dir); alive && pid == cmd.Process.Pid {
				return pid, nil
			}
		}
	}
}

// restoredMemcached counts the Memcached a kept cluster holds from its last
// run: one left Degraded then is back, and would otherwise reappear
// unannounced. Before the CRD is installed there are none.
func restoredMemcached(kubeconfig string) int {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return 0
	}
	client, err := metadata.NewForConfig(cfg)
	if err != nil {
		return 0
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	list, err := client.Resource(schema.GroupVersionResource{Group: "cache.example.com", Version: "v1", Resource: "memcacheds"}).
		List(ctx, metav1.ListOptions{})
	if err != nil {
		if !apierrors.IsNotFound(err) {
			fmt.Fprintf(os.Stderr, "local-cluster: counting the Memcached the cluster kept: %v\n", err)
		}
		return 0
	}
	return len(list.Items)
}

// tail is the last n lines of the file at path.
func tail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
