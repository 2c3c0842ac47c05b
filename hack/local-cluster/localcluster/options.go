package localcluster

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Component names one process of the cluster. The name is also the binary's
// file name in Options.BinDir and the base name of its log file.
type Component string

// The components of a cluster, in start order. Stop works in reverse order.
const (
	Etcd              Component = "etcd"
	APIServer         Component = "kube-apiserver"
	ControllerManager Component = "kube-controller-manager"
	Scheduler         Component = "kube-scheduler"
	Kwok              Component = "kwok"
)

// components lists the cluster's components in start order: the control
// plane and kwok, then the real node's when there is one, CoreDNS first so
// that the node's first pod can resolve names.
func (o Options) components() []Component {
	c := []Component{Etcd, APIServer, ControllerManager, Scheduler, Kwok}
	if o.RealNode {
		c = append(c, CoreDNS, Containerd, Kubelet, KubeProxy)
	}
	return c
}

// allComponents are every component a cluster may have, for validation.
func allComponents() []Component {
	return Options{RealNode: true}.components()
}

// BinDirEnv is the environment variable that Options.BinDir defaults to. It is
// the variable envtest reads too, so one setting serves both.
const BinDirEnv = "KUBEBUILDER_ASSETS"

// Options configures a Cluster. The zero value is usable when BinDirEnv is set.
type Options struct {
	// BinDir holds the binaries etcd, kube-apiserver, kube-controller-manager,
	// kube-scheduler and kwok. Defaults to $KUBEBUILDER_ASSETS. A package cannot
	// know where the repository's bin/k8s/<version> folder is, so one of the
	// two must be given; relative paths are taken from the working directory.
	BinDir string

	// Dir is where the cluster keeps its state: kubeconfig, logs/, etcd/,
	// pki/ and config/. Start replaces those entries but leaves anything else
	// in Dir alone. Defaults to a new temporary directory, which Stop removes;
	// a Dir that was given is kept, logs included.
	Dir string

	// KeepState makes Start reuse the etcd data that an earlier cluster left
	// in Dir, so that its objects survive a stop and a start, as a user of
	// `make local-cluster` expects. Credentials, ports and the real node's
	// containers are new each time. Without it every Start is a fresh cluster.
	KeepState bool

	// StagesFile is a kwok configuration holding the Stage objects that move
	// fake nodes and pods through their lifecycle; kwok refuses to start
	// without them. Defaults to <BinDir>/kwok-stages.yaml.
	StagesFile string

	// Nodes is the number of fake (kwok) nodes. Defaults to 1, or to 0 when
	// RealNode is set.
	Nodes int

	// RealNode adds a node that runs pods for real: kubelet, containerd with
	// runc and the CNI bridge plugin, kube-proxy giving Services their
	// ClusterIPs, and CoreDNS answering pods' queries for cluster.local. Pods without a toleration for the fake nodes' taint run
	// there. It needs root, and the machine holds one real node at a time.
	// The API server then listens on the pod network's gateway address, so
	// that pods reach it through the kubernetes Service.
	RealNode bool

	// RegistryMirrors makes the real node pull the images of each registry
	// host, as containerd names it ("docker.io", "quay.io"), from a mirror
	// endpoint ("http://127.0.0.1:<port>") and from nowhere else: the
	// host's hosts.toml names the mirror as its server, so containerd never
	// falls back to the host itself. Other hosts keep the default, on which
	// every pull fails. Needs RealNode.
	RegistryMirrors map[string]string

	// NodeCapacity is the capacity and allocatable of every fake node.
	// Defaults to 64 CPUs, 256Gi of memory and 2000 pods; spread larger
	// workloads over more Nodes.
	NodeCapacity corev1.ResourceList

	// ExtraArgs adds command-line flags to a component, after the launcher's
	// own. For a single-valued flag the last one wins, so this can override a
	// default; list-valued flags are appended to.
	ExtraArgs map[Component][]string

	// StartTimeout bounds Start, StartAPIServer and StartEtcd, on top of
	// their context. Defaults to 2 minutes, enough for a cold start on a busy
	// two-core machine.
	StartTimeout time.Duration

	// StopTimeout is how long a process may take to exit after SIGTERM before
	// its process group gets SIGKILL. Defaults to 20 seconds.
	StopTimeout time.Duration
}

// withDefaults returns a copy of o with every unset field defaulted and the
// paths made absolute, so that a later change of working directory cannot
// change what the cluster runs.
func (o Options) withDefaults() (Options, error) {
	if o.BinDir == "" {
		o.BinDir = os.Getenv(BinDirEnv)
	}
	if o.BinDir == "" {
		return o, fmt.Errorf("localcluster: Options.BinDir is empty and $%s is not set", BinDirEnv)
	}
	var err error
	if o.BinDir, err = filepath.Abs(o.BinDir); err != nil {
		return o, err
	}
	if o.StagesFile == "" {
		o.StagesFile = filepath.Join(o.BinDir, "kwok-stages.yaml")
	}
	if o.StagesFile, err = filepath.Abs(o.StagesFile); err != nil {
		return o, err
	}
	if o.Dir != "" {
		if o.Dir, err = filepath.Abs(o.Dir); err != nil {
			return o, err
		}
	}
	if o.Nodes == 0 && !o.RealNode {
		o.Nodes = 1
	}
	if o.NodeCapacity == nil {
		o.NodeCapacity = corev1.ResourceList{
			corev1.ResourceCPU:    resource.MustParse("64"),
			corev1.ResourceMemory: resource.MustParse("256Gi"),
			corev1.ResourcePods:   resource.MustParse("2000"),
		}
	}
	if o.StartTimeout == 0 {
		o.StartTimeout = 2 * time.Minute
	}
	if o.StopTimeout == 0 {
		o.StopTimeout = 20 * time.Second
	}
	return o, nil
}

// validate reports every problem at once, so a misconfigured machine is fixed
// in one go rather than one missing binary at a time.
func (o Options) validate() error {
	var errs []error
	if o.Nodes < 0 {
		errs = append(errs, fmt.Errorf("Options.Nodes must not be negative, got %d", o.Nodes))
	}
	if o.KeepState && o.Dir == "" {
		errs = append(errs, errors.New("Options.KeepState needs Options.Dir: a temporary directory holds no earlier state"))
	}
	binaries := o.components()
	if o.RealNode {
		binaries = append(binaries, "containerd-shim-runc-v2", "ctr")
	}
	for _, c := range binaries {
		p := filepath.Join(o.BinDir, string(c))
		if fi, err := os.Stat(p); err != nil {
			errs = append(errs, fmt.Errorf("binary %s: %w", c, err))
		} else if fi.IsDir() || fi.Mode().Perm()&0o111 == 0 {
			errs = append(errs, fmt.Errorf("binary %s: %s is not an executable file", c, p))
		}
	}
	if _, err := os.Stat(o.StagesFile); err != nil {
		errs = append(errs, fmt.Errorf("kwok stages file: %w", err))
	}
	if o.RealNode {
		if os.Geteuid() != 0 {
			errs = append(errs, errors.New("a real node needs root (it creates a bridge, iptables rules and cgroups)"))
		}
		for path, pkg := range nodeHostTools() {
			if _, err := os.Stat(path); err != nil {
				errs = append(errs, fmt.Errorf("%s (Debian package %s; make node-packages installs it): %w", path, pkg, err))
			}
		}
	}
	if len(o.RegistryMirrors) > 0 && !o.RealNode {
		errs = append(errs, errors.New("Options.RegistryMirrors needs Options.RealNode: only the real node pulls"))
	}
	for host, endpoint := range o.RegistryMirrors {
		if host == "" || strings.ContainsAny(host, ":/") {
			errs = append(errs, fmt.Errorf("Options.RegistryMirrors: %q is not a registry host without a port", host))
		}
		if u, err := url.Parse(endpoint); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs = append(errs, fmt.Errorf("Options.RegistryMirrors[%s]: %q is not an http(s) endpoint", host, endpoint))
		}
	}
	for c := range o.ExtraArgs {
		if !slices.Contains(allComponents(), c) {
			errs = append(errs, fmt.Errorf("Options.ExtraArgs: unknown component %q", c))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("localcluster: invalid options (make control-plane builds the binaries, make node the real node's): %w", err)
	}
	return nil
}
