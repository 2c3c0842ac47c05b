package localcluster

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

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

// Leftovers lists what the cluster in dir left running on the machine:
// processes started for it (their command lines name dir) or running in a
// real node's pod cgroups, unless the node lock names another cluster's
// node, and mounts under dir. It is empty after a clean Stop; tests assert
// that.
func Leftovers(dir string) ([]string, error) {
	procs, err := hostProcesses()
	if err != nil {
		return nil, err
	}
	lock, err := os.ReadFile(nodeLockPath)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	pods := podsMayBeOf(lock, dir)
	var left []string
	for pid, args := range procs {
		cgroup, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
		if slices.ContainsFunc(args, func(a string) bool { return strings.Contains(a, dir+"/") }) ||
			pods && strings.Contains(string(cgroup), "/kubepods") {
			left = append(left, fmt.Sprintf("process %d: %s", pid, strings.Join(args, " ")))
		}
	}
	mounts, err := mountsUnder(dir)
	if err != nil {
		return nil, err
	}
	for _, m := range mounts {
		left = append(left, "mount "+m)
	}
	return left, nil
}

// podsMayBeOf says whether the machine's pod cgroups may hold pods of the
// cluster in dir, given the node lock's content: the /kubepods cgroups are
// the real node's, one per machine, and while the lock names another
// cluster's node (running, or left by a launcher that died), the pods in
// them are that cluster's.
func podsMayBeOf(lock []byte, dir string) bool {
	owner := lockedDir(lock)
	return owner == "" || filepath.Clean(owner) == filepath.Clean(dir)
}

// NodeLeftovers is Leftovers plus what only a real node puts on the
// machine (see networkLeftovers). Its iptables checks need the iptables
// package, which only a real node requires: a cluster without one is
// checked with Leftovers.
func NodeLeftovers(dir string) ([]string, error) {
	left, err := Leftovers(dir)
	if err != nil {
		return nil, err
	}
	network, err := networkLeftovers()
	if err != nil {
		return nil, err
	}
	return append(left, network...), nil
}

// hostProcesses maps the pid of every process that has a command line
// (kernel threads have none) to its arguments.
func hostProcesses() (map[int][]string, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	out := map[int][]string{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || len(cmdline) == 0 {
			continue
		}
		out[pid] = strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00")
	}
	return out, nil
}

// killShims kills the containerd-shim-runc-v2 processes serving the
// containerd at socket; they outlive containerd on purpose.
func killShims(socket string) error {
	procs, err := hostProcesses()
	if err != nil {
		return err
	}
	for pid, args := range procs {
		if filepath.Base(args[0]) == "containerd-shim-runc-v2" && slices.Contains(args, socket) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	return nil
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
