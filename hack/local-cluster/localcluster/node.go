package localcluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/example-inc/memcached-operator/hack/local-cluster/images"
)

// The real node's components, started after kwok in this order.
const (
	Containerd Component = "containerd"
	Kubelet    Component = "kubelet"
	KubeProxy  Component = "kube-proxy"
)

// RealNodeName is the real node's name.
const RealNodeName = "localcluster-node"

// nodeLockPath serialises real nodes on the machine: the bridge, the route,
// kube-proxy's iptables chains and the /kubepods cgroups exist once per
// machine. It holds the pid and directory of the node that holds it, so
// that the next one can clean up after a launcher that died.
const nodeLockPath = "/run/localcluster-node.lock"

// runcBinary and the CNI plugins come from Debian's runc and
// containernetworking-plugins packages (make node-packages).
const runcBinary = "/usr/sbin/runc"

// nodeHostTools are what the real node needs from the machine, with the
// package that brings each.
func nodeHostTools() map[string]string {
	return map[string]string{
		runcBinary:                             "runc",
		filepath.Join(cniBinDir, "bridge"):     "containernetworking-plugins",
		filepath.Join(cniBinDir, "host-local"): "containernetworking-plugins",
		filepath.Join(cniBinDir, "loopback"):   "containernetworking-plugins",
		"/usr/sbin/iptables":                   "iptables",
		"/usr/sbin/ip":                         "iproute2",
		"/usr/sbin/conntrack":                  "conntrack",
		// The client image's (images.Busybox).
		"/bin/busybox": "busybox-static",
	}
}

// node is the machine-wide state of a real node while the cluster runs.
type node struct {
	lock *os.File
	// ipForward is net.ipv4.ip_forward before the node started; the CNI
	// bridge plugin changes it, teardown restores it.
	ipForward []byte
}

const ipForwardPath = "/proc/sys/net/ipv4/ip_forward"

// ErrNodeRunning is returned while another cluster's real node runs on the
// machine.
var ErrNodeRunning = errors.New("another local cluster with a real node runs on this machine")

// NodeLock is what the machine's real-node lock says.
type NodeLock struct {
	// Holder names the real node that runs ("pid N dir D"), empty when
	// none does: a lock no process holds is free, whatever it still says.
	Holder string
	// Left is true when the lock names a node whose launcher died without
	// stopping it: RemoveNodeLeftovers cleans up after it.
	Left bool
}

// ReadNodeLock reads the real-node lock without taking it.
func ReadNodeLock() (NodeLock, error) {
	f, err := os.Open(nodeLockPath)
	if errors.Is(err, os.ErrNotExist) {
		return NodeLock{}, nil
	}
	if err != nil {
		return NodeLock{}, err
	}
	defer func() { _ = f.Close() }()
	content, err := io.ReadAll(f)
	if err != nil {
		return NodeLock{}, err
	}
	recorded := strings.TrimSpace(string(content))
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); errors.Is(err, syscall.EWOULDBLOCK) {
		return NodeLock{Holder: recorded}, nil
	} else if err != nil {
		return NodeLock{}, err
	}
	return NodeLock{Left: recorded != ""}, nil
}

// RemoveNodeLeftovers removes what a real node left on the machine when its
// launcher died without stopping it (see NodeLeftovers): nothing, if it
// stopped cleanly. It fails with ErrNodeRunning while a real node runs.
// binDir holds kube-proxy, whose --cleanup removes its iptables chains.
func RemoveNodeLeftovers(binDir string) error {
	n, err := acquireNode(layout{}, filepath.Join(binDir, string(KubeProxy)))
	if err != nil {
		return err
	}
	return n.release()
}

// acquireNode takes the machine's node lock and removes whatever the node
// that held it last left behind.
func acquireNode(l layout, kubeProxy string) (_ *node, err error) {
	f, err := os.OpenFile(nodeLockPath, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		holder, _ := os.ReadFile(nodeLockPath)
		_ = f.Close()
		return nil, fmt.Errorf("%w (%s): stop it first (make local-cluster-down)", ErrNodeRunning, strings.TrimSpace(string(holder)))
	}
	n := &node{lock: f}
	defer func() {
		if err != nil {
			_ = n.release()
		}
	}()
	previous, _ := os.ReadFile(nodeLockPath)
	if dir := lockedDir(previous); dir != "" {
		if err := removeLeftovers(layout{dir: dir}, kubeProxy); err != nil {
			return nil, fmt.Errorf("cleaning up after the real node in %s: %w", dir, err)
		}
	}
	if err := errors.Join(f.Truncate(0), writeAt0(f, fmt.Sprintf("pid %d dir %s\n", os.Getpid(), l.dir))); err != nil {
		return nil, err
	}
	if n.ipForward, err = os.ReadFile(ipForwardPath); err != nil {
		return nil, err
	}
	return n, nil
}

func writeAt0(f *os.File, s string) error {
	_, err := f.WriteAt([]byte(s), 0)
	return err
}

// lockedDir is the directory recorded in the lock file's content.
func lockedDir(content []byte) string {
	_, dir, ok := strings.Cut(strings.TrimSpace(string(content)), " dir ")
	if !ok {
		return ""
	}
	return dir
}

// release tears the network down, restores ip_forward and gives the lock
// back, clearing its content: nothing is left to clean up.
func (n *node) release() error {
	var errs []error
	errs = append(errs, networkDown())
	if n.ipForward != nil {
		errs = append(errs, os.WriteFile(ipForwardPath, n.ipForward, 0o644))
	}
	errs = append(errs, n.lock.Truncate(0), n.lock.Close())
	return errors.Join(errs...)
}

// prepareNode writes the real node's configuration files and builds the
// sandbox image and the client image, which containerd imports once it is
// up.
func (c *Cluster) prepareNode(ctx context.Context) error {
	l := c.layout
	for _, d := range []string{l.containerdRoot(), l.containerdState(), filepath.Join(l.registryHosts(), "_default"),
		l.runcRoot(), l.cniConfDir(), l.cniIPAMDir(), l.kubeletRoot(), l.nodeTmp(), l.images()} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	cni, err := cniConfig(l)
	if err != nil {
		return err
	}
	kubelet, err := kubeletConfig(l, c.nodePorts, c.pki)
	if err != nil {
		return err
	}
	proxy, err := kubeProxyConfig(l, c.nodePorts)
	if err != nil {
		return err
	}
	for path, content := range map[string]string{
		l.containerdConfig(): containerdConfig(l),
		filepath.Join(l.registryHosts(), "_default", "hosts.toml"): registryHostsFile,
		filepath.Join(l.cniConfDir(), "10-localcluster.conflist"):  cni,
		l.kubeletConfig():   kubelet,
		l.kubeProxyConfig(): proxy,
		l.resolvConf():      resolvConf,
		l.corefile():        corefile(l, c.nodePorts.coreDNSReady),
	} {
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			return err
		}
	}
	// containerd finds its shim next to itself through PATH, and runc
	// where Debian puts it; its unpack mounts go to TMPDIR. No proxy
	// variable: the node's clients talk to the API server directly.
	env := []string{"PATH=" + c.opts.BinDir + ":/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "TMPDIR=" + l.nodeTmp(), "HOME=" + l.node()}
	for _, comp := range []Component{CoreDNS, Containerd, Kubelet, KubeProxy} {
		s := c.specs[comp]
		s.Env = env
		c.specs[comp] = s
	}
	for host, endpoint := range c.opts.RegistryMirrors {
		dir := filepath.Join(l.registryHosts(), host)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, "hosts.toml"), []byte(registryMirrorHostsFile(endpoint)), 0o644); err != nil {
			return err
		}
	}
	pause, err := images.Pause(ctx, l.images(), SandboxImage)
	if err != nil {
		return fmt.Errorf("building the sandbox image: %w", err)
	}
	busybox, err := images.Busybox(l.images(), images.BusyboxTag)
	if err != nil {
		return fmt.Errorf("building the client image: %w", err)
	}
	c.nodeImages = []string{pause.Archive, busybox.Archive}
	return nil
}

// realNodeReady succeeds once the real node reports Ready.
func realNodeReady(ctx context.Context, cs kubernetes.Interface) error {
	n, err := cs.CoreV1().Nodes().Get(ctx, RealNodeName, metav1.GetOptions{})
	if err != nil {
		return err
	}
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
			return nil
		}
	}
	return fmt.Errorf("node %s not Ready yet", RealNodeName)
}
