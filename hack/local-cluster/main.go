package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/example-inc/memcached-operator/hack/local-cluster/localcluster"
	"github.com/example-inc/memcached-operator/hack/repo"
)

// options are the flags of every command; each command registers those it
// reads.
type options struct {
	dir    string
	binDir string
	// node is auto, real or kwok; packages are the real node's Debian
	// packages, which auto checks.
	node     string
	packages []string
	fresh    bool
	// images are image archives to import into the real node, beside
	// the pods' images.
	images []string
	// run's alone: the cluster as the launcher starts it.
	cluster localcluster.Options
}

// errNotRunning is status's answer for a cluster that does not run: exit
// status 3, as service managers say it.
var errNotRunning = errors.New("local cluster not running")

// command is one of the tool's commands: the flags it reads, and what it
// does.
type command struct {
	flags []func(*flag.FlagSet, *options)
	run   func(options) error
}

// commandNamed is the command name, ok false for none.
func commandNamed(name string) (c command, ok bool) {
	switch name {
	case "up":
		return command{flags: []func(*flag.FlagSet, *options){nodeFlags, freshFlag, imageFlag}, run: up}, true
	case "down":
		return command{run: down}, true
	case "status":
		return command{run: status}, true
	case "node":
		return command{flags: []func(*flag.FlagSet, *options){nodeFlags}, run: printNode}, true
	case "run":
		return command{flags: []func(*flag.FlagSet, *options){clusterFlags, freshFlag, imageFlag}, run: launch}, true
	}
	return command{}, false
}

func nodeFlags(fs *flag.FlagSet, o *options) {
	fs.StringVar(&o.node, "node", nodeAuto, "the node that runs pods: real (kubelet, containerd, runc; root on Linux), kwok (fake pods), or auto: real wherever it can run")
	fs.Func("packages", "the real node's Debian packages, space-separated, which auto checks are installed or installable", func(s string) error {
		o.packages = strings.Fields(s)
		return nil
	})
}

func freshFlag(fs *flag.FlagSet, o *options) {
	fs.BoolVar(&o.fresh, "fresh", false, "start an empty cluster, discarding the objects an earlier one in --dir left (default: keep them)")
}

func imageFlag(fs *flag.FlagSet, o *options) {
	fs.Func("image", "an image archive (docker save or OCI layout tar) to import into the real node, as kind load image-archive does; repeat for more", func(s string) error {
		abs, err := filepath.Abs(s)
		o.images = append(o.images, abs)
		return err
	})
}

func clusterFlags(fs *flag.FlagSet, o *options) {
	fs.IntVar(&o.cluster.Nodes, "nodes", 0, "number of fake (kwok) nodes (default 1, or 0 with --real-node)")
	fs.BoolVar(&o.cluster.RealNode, "real-node", false, "add a node that runs pods for real (kubelet, containerd, kube-proxy; needs root)")
	fs.StringVar(&o.cluster.StagesFile, "stages", "", "kwok stages file (default <bin-dir>/kwok-stages.yaml)")
}

// parseFlags parses the flags of the command name.
func parseFlags(name string, args []string) (command, options, error) {
	cmd, ok := commandNamed(name)
	if !ok {
		return cmd, options{}, fmt.Errorf("unknown command %q: the commands are up, down, status, node and run", name)
	}
	var o options
	fs := flag.NewFlagSet("local-cluster "+name, flag.ContinueOnError)
	fs.StringVar(&o.dir, "dir", ".local-cluster", "directory for the kubeconfig, pid file, logs and cluster state")
	fs.StringVar(&o.binDir, "bin-dir", "", "directory holding the cluster's binaries: etcd, kube-apiserver, ..., kwok, the real node's too (default: the repository's bin/k8s/<version>)")
	for _, register := range cmd.flags {
		register(fs, &o)
	}
	if err := fs.Parse(args); err != nil {
		return cmd, o, err
	}
	if fs.NArg() > 0 {
		return cmd, o, fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	if o.cluster.Nodes < 0 {
		return cmd, o, fmt.Errorf("--nodes must not be negative, got %d", o.cluster.Nodes)
	}
	abs, err := filepath.Abs(o.dir)
	if err != nil {
		return cmd, o, err
	}
	o.dir = abs
	return cmd, o, nil
}

// controlPlaneDir is --bin-dir, by default the repository's: up passes it
// on to run, which runs the binaries, and down to kube-proxy's cleanup.
func (o options) controlPlaneDir() string {
	if o.binDir != "" {
		return o.binDir
	}
	return repo.ControlPlaneDir()
}

func main() {
	os.Exit(runCommand(os.Args[1:]))
}

// runCommand runs the command args name and returns the exit status.
func runCommand(args []string) int {
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "usage: local-cluster up|down|status|node|run [flags]")
		return 2
	}
	cmd, o, err := parseFlags(args[0], args[1:])
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "local-cluster:", err)
		return 2
	}
	err = cmd.run(o)
	switch {
	case errors.Is(err, errNotRunning):
		return 3
	case err != nil:
		fmt.Fprintln(os.Stderr, "local-cluster:", err)
		return 1
	}
	return 0
}
