package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// status says whether the cluster in o.dir runs, with which node, and how
// to use it. A cluster that runs but whose API server does not answer
// /readyz is an error; one that does not run is errNotRunning.
func status(o options) error {
	pid, alive := running(o.dir)
	if !alive {
		fmt.Println("local cluster not running")
		return errNotRunning
	}
	kind, err := os.ReadFile(nodeKindPath(o.dir))
	if err != nil {
		return err
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfigPath(o.dir))
	if err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := cs.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx); err != nil {
		return fmt.Errorf("local cluster (pid %d) runs, but its API server is not ready: %w", pid, err)
	}
	fmt.Printf("local cluster running (pid %d), node %s, API server ready at %s\nexport KUBECONFIG=%s\n",
		pid, strings.TrimSpace(string(kind)), cfg.Host, kubeconfigPath(o.dir))
	return nil
}
