package localcluster

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/example-inc/memcached-operator/test/framework/images"
)

// The real node's components, started after kwok in this order.
const (
	Containerd Component = "containerd"
	Kubelet    Component = "kubelet"
	KubeProxy  Component = "kube-proxy"
)

// RealNodeName is the real node's name.
const RealNodeName = "localcluster-node"

// SandboxImage is the pod sandbox image containerd runs for every pod,
// containerd's own default; the launcher builds and imports it (package
// images), as nothing may be pulled.
const SandboxImage = "registry.k8s.io/pause:3.10.1"

// The pod network: a bridge the launcher creates before anything starts,
// which the CNI bridge plugin then attaches pods to. Its address is the
// pods' gateway, the address the API server listens on and advertises (so
// pods reach it through the kubernetes Service) and the node's InternalIP
// (so kube-proxy programs its rules). The Service range is routed to the
// bridge: a ClusterIP that kube-proxy has no rule for dies here instead of
// following the default route off the machine.
const (
	bridgeName = "localcluster0"
	bridgeCIDR = "10.88.0.0/16"
	bridgeIP   = "10.88.0.1"
)

// forwardGuard is the iptables rule that keeps pods' traffic on the
// machine: the CNI bridge plugin turns on IP forwarding, and nothing a pod
// sends may be forwarded out of another interface.
var forwardGuard = []string{"FORWARD", "-i", bridgeName, "!", "-o", bridgeName,
	"-m", "comment", "--comment", "localcluster: pods stay on this machine", "-j", "DROP"}

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

// run runs a command and returns its error with its output.
func run(name string, args ...string) error {
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return nil
}

// networkUp creates the bridge with its address, routes the Service range
// to it and adds the forward guard.
func networkUp() error {
	for _, args := range [][]string{
		{"link", "add", bridgeName, "type", "bridge"},
		{"addr", "add", bridgeIP + "/16", "dev", bridgeName},
		{"link", "set", bridgeName, "up"},
		{"route", "add", serviceCIDR, "dev", bridgeName},
	} {
		if err := run("ip", args...); err != nil {
			return err
		}
	}
	return run("iptables", append([]string{"-w", "-I"}, forwardGuard...)...)
}

// networkDown removes what networkUp made, whatever of it exists. Deleting
// the bridge deletes its address and the route through it.
func networkDown() error {
	var errs []error
	for run("iptables", append([]string{"-w", "-C"}, forwardGuard...)...) == nil {
		if err := run("iptables", append([]string{"-w", "-D"}, forwardGuard...)...); err != nil {
			errs = append(errs, err)
			break
		}
	}
	if _, err := os.Stat("/sys/class/net/" + bridgeName); err == nil {
		errs = append(errs, run("ip", "link", "del", bridgeName))
	}
	return errors.Join(errs...)
}

// removeLeftovers removes what a node in l leaves when its processes are
// killed rather than stopped: container processes and their shims, the
// mounts under the node directory, the pods' cgroups, kube-proxy's iptables
// chains and the network. It is safe to run when nothing is left.
func removeLeftovers(l layout, kubeProxy string) error {
	var errs []error
	// Containers first: killing a shim would orphan its container.
	errs = append(errs, killCgroupProcesses("kubepods"))
	errs = append(errs, killShims(l.containerdSocket()))
	errs = append(errs, unmountUnder(l.node()))
	errs = append(errs, removeCgroups("kubepods"))
	// --cleanup removes every KUBE-* chain and rule of both families but
	// KUBE-FIREWALL, which kube-proxy shares with kubelet and leaves.
	if _, err := os.Stat(kubeProxy); err == nil {
		errs = append(errs, run(kubeProxy, "--cleanup"))
	}
	errs = append(errs, removeKubeFirewall())
	errs = append(errs, networkDown())
	return errors.Join(errs...)
}

// removeKubeFirewall removes the KUBE-FIREWALL chain and the INPUT and
// OUTPUT jumps to it, in both IP families.
func removeKubeFirewall() error {
	var errs []error
	for _, tool := range []string{"iptables", "ip6tables"} {
		for _, chain := range []string{"INPUT", "OUTPUT"} {
			for run(tool, "-w", "-C", chain, "-j", "KUBE-FIREWALL") == nil {
				if err := run(tool, "-w", "-D", chain, "-j", "KUBE-FIREWALL"); err != nil {
					errs = append(errs, err)
					break
				}
			}
		}
		if run(tool, "-w", "-S", "KUBE-FIREWALL") == nil {
			errs = append(errs, run(tool, "-w", "-F", "KUBE-FIREWALL"), run(tool, "-w", "-X", "KUBE-FIREWALL"))
		}
	}
	return errors.Join(errs...)
}

// cgroupMounts are the cgroup v1 hierarchies (and a v2 unified mount, if
// any) of this machine.
func cgroupMounts() ([]string, error) {
	mounts, err := mountPoints()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, m := range mounts {
		if m.fsType == "cgroup" || m.fsType == "cgroup2" {
			out = append(out, m.path)
		}
	}
	return out, nil
}

// killCgroupProcesses kills every process in the cgroup name (and below) of
// every hierarchy, until none is left.
func killCgroupProcesses(name string) error {
	roots, err := cgroupMounts()
	if err != nil {
		return err
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		var pids []int
		for _, root := range roots {
			_ = filepath.WalkDir(filepath.Join(root, name), func(p string, d os.DirEntry, err error) error {
				if err != nil || d.IsDir() || d.Name() != "cgroup.procs" {
					return nil
				}
				data, _ := os.ReadFile(p)
				for _, f := range strings.Fields(string(data)) {
					if pid, err := strconv.Atoi(f); err == nil && !slices.Contains(pids, pid) {
						pids = append(pids, pid)
					}
				}
				return nil
			})
		}
		if len(pids) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("processes %v in cgroup %s survive SIGKILL", pids, name)
		}
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// removeCgroups removes the cgroup name and everything below it, deepest
// first, in every hierarchy. The cgroups must be empty.
func removeCgroups(name string) error {
	roots, err := cgroupMounts()
	if err != nil {
		return err
	}
	var errs []error
	for _, root := range roots {
		var dirs []string
		_ = filepath.WalkDir(filepath.Join(root, name), func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, p)
			}
			return nil
		})
		for _, d := range slices.Backward(dirs) {
			if err := syscall.Rmdir(d); err != nil && !errors.Is(err, syscall.ENOENT) {
				errs = append(errs, fmt.Errorf("removing cgroup %s: %w", d, err))
			}
		}
	}
	return errors.Join(errs...)
}

// killShims kills the containerd-shim-runc-v2 processes serving the
// containerd at socket; they outlive containerd on purpose.
func killShims(socket string) error {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return err
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		args := strings.Split(string(cmdline), "\x00")
		if len(args) > 0 && filepath.Base(args[0]) == "containerd-shim-runc-v2" && slices.Contains(args, socket) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	return nil
}

// mount is one line of /proc/self/mountinfo.
type mount struct {
	path, fsType string
}

func mountPoints() ([]mount, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	var out []mount
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// id parent major:minor root mountpoint options [optional...] - fstype source super
		fields := strings.Fields(sc.Text())
		sep := slices.Index(fields, "-")
		if len(fields) < 5 || sep < 0 || sep+1 >= len(fields) {
			continue
		}
		out = append(out, mount{path: unescapeMountPath(fields[4]), fsType: fields[sep+1]})
	}
	return out, sc.Err()
}

// unescapeMountPath undoes mountinfo's octal escapes (\040 for a space).
func unescapeMountPath(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// MountsUnder lists the mount points at or under dir, deepest first.
func MountsUnder(dir string) ([]string, error) {
	mounts, err := mountPoints()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, m := range mounts {
		if m.path == dir || strings.HasPrefix(m.path, dir+"/") {
			out = append(out, m.path)
		}
	}
	slices.SortFunc(out, func(a, b string) int { return strings.Count(b, "/") - strings.Count(a, "/") })
	return slices.Compact(out), nil
}

// unmountUnder detaches every mount at or under dir, deepest first.
func unmountUnder(dir string) error {
	for range 5 {
		mounts, err := MountsUnder(dir)
		if err != nil || len(mounts) == 0 {
			return err
		}
		for _, m := range mounts {
			_ = syscall.Unmount(m, syscall.MNT_DETACH)
		}
	}
	mounts, err := MountsUnder(dir)
	if err == nil && len(mounts) > 0 {
		err = fmt.Errorf("mounts left under %s: %v", dir, mounts)
	}
	return err
}

// cri is a client of containerd's CRI service, as kubelet uses it.
func (c *Cluster) cri() (runtimeapi.RuntimeServiceClient, func() error, error) {
	conn, err := grpc.NewClient("unix://"+c.layout.containerdSocket(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, nil, err
	}
	return runtimeapi.NewRuntimeServiceClient(conn), conn.Close, nil
}

// criReady succeeds once containerd answers on its CRI socket.
func (c *Cluster) criReady(ctx context.Context) error {
	rt, closeConn, err := c.cri()
	if err != nil {
		return err
	}
	defer func() { _ = closeConn() }()
	_, err = rt.Version(ctx, &runtimeapi.VersionRequest{})
	return err
}

// removePods stops and removes every pod sandbox through the CRI, as kubelet
// would: that runs the CNI DEL (the pod's veth and address go) and unmounts
// the sandbox's /dev/shm and network namespace.
func (c *Cluster) removePods(ctx context.Context) error {
	rt, closeConn, err := c.cri()
	if err != nil {
		return err
	}
	defer func() { _ = closeConn() }()
	list, err := rt.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{})
	if err != nil {
		return err
	}
	var errs []error
	for _, s := range list.Items {
		if _, err := rt.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: s.Id}); err != nil {
			errs = append(errs, err)
			continue
		}
		if _, err := rt.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: s.Id}); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// ContainerPID is the host process id of a container of the real node, by
// the ID a pod's status gives it (containerd://<id>), for reading
// /proc/<pid>/environ or killing it as a crash would.
func (c *Cluster) ContainerPID(ctx context.Context, containerID string) (int, error) {
	rt, closeConn, err := c.cri()
	if err != nil {
		return 0, err
	}
	defer func() { _ = closeConn() }()
	resp, err := rt.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{
		ContainerId: strings.TrimPrefix(containerID, "containerd://"), Verbose: true,
	})
	if err != nil {
		return 0, err
	}
	var info struct {
		Pid int `json:"pid"`
	}
	if err := json.Unmarshal([]byte(resp.Info["info"]), &info); err != nil || info.Pid == 0 {
		return 0, fmt.Errorf("container %s: no pid in its status (%v)", containerID, err)
	}
	return info.Pid, nil
}

// ImportImages loads docker-archives (package images writes them) into the
// real node's containerd, where pods find them by name.
func (c *Cluster) ImportImages(ctx context.Context, archives ...string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.opts.RealNode {
		return errors.New("localcluster: ImportImages needs Options.RealNode")
	}
	return c.importImages(ctx, archives...)
}

func (c *Cluster) importImages(ctx context.Context, archives ...string) error {
	for _, a := range archives {
		cmd := exec.CommandContext(ctx, filepath.Join(c.opts.BinDir, "ctr"),
			"--address", c.layout.containerdSocket(), "--namespace", "k8s.io", "images", "import", a)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("ctr images import %s: %w: %s", a, err, bytes.TrimSpace(out))
		}
	}
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

// prepareNode writes the real node's configuration files and builds the
// sandbox image, which containerd imports once it is up.
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
	} {
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			return err
		}
	}
	// containerd finds its shim next to itself through PATH, and runc
	// where Debian puts it; its unpack mounts go to TMPDIR.
	env := []string{"PATH=" + c.opts.BinDir + ":/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "TMPDIR=" + l.nodeTmp(), "HOME=" + l.node()}
	for _, comp := range []Component{Containerd, Kubelet, KubeProxy} {
		s := c.specs[comp]
		s.Env = env
		c.specs[comp] = s
	}
	pause, err := images.Pause(ctx, l.images(), SandboxImage)
	if err != nil {
		return fmt.Errorf("building the sandbox image: %w", err)
	}
	c.sandboxImage = pause.Archive
	return nil
}

// NodeLeftovers lists what a real node of the cluster in dir left on the
// machine: processes started for it (their command lines name dir) or
// running in the pods' cgroups, mounts under dir, the bridge, the Service
// route, the forward guard and any KUBE-* iptables chain of either family.
// It is empty after a clean Stop; tests assert that.
func NodeLeftovers(dir string) ([]string, error) {
	var left []string
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || len(cmdline) == 0 {
			continue
		}
		args := strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00")
		cgroup, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cgroup"))
		if strings.Contains(string(cmdline), dir+"/") || strings.Contains(string(cgroup), "/kubepods") {
			left = append(left, fmt.Sprintf("process %s: %s", e.Name(), strings.Join(args, " ")))
		}
	}
	mounts, err := MountsUnder(dir)
	if err != nil {
		return nil, err
	}
	for _, m := range mounts {
		left = append(left, "mount "+m)
	}
	if _, err := os.Stat("/sys/class/net/" + bridgeName); err == nil {
		left = append(left, "network interface "+bridgeName)
	}
	if out, err := exec.Command("ip", "route", "show", serviceCIDR).Output(); err == nil && len(bytes.TrimSpace(out)) > 0 {
		left = append(left, "route "+strings.TrimSpace(string(out)))
	}
	if run("iptables", append([]string{"-w", "-C"}, forwardGuard...)...) == nil {
		left = append(left, "iptables rule "+strings.Join(forwardGuard, " "))
	}
	for _, tool := range []string{"iptables-save", "ip6tables-save"} {
		out, err := exec.Command(tool).Output()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", tool, err)
		}
		for _, l := range strings.Split(string(out), "\n") {
			if strings.Contains(l, "KUBE-") {
				left = append(left, tool+": "+l)
			}
		}
	}
	return left, nil
}
