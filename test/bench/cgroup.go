package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// cpuCgroup is what the CPU controller of a process's cgroup says: its
// quota, and how often CFS throttled it.
type cpuCgroup struct {
	// limitCores is the quota over the period; 0 when there is none.
	limitCores float64
	// periods counts the CFS periods in which the cgroup ran, throttled
	// those in which it used up its quota.
	periods, throttled int64
}

// readCPUCgroup reads the CPU controller of pid's cgroup, v1 (the
// cpu,cpuacct hierarchy) or v2.
func readCPUCgroup(pid int) (cpuCgroup, error) {
	dir, v2, err := cgroupDir(pid, "cpu")
	if err != nil {
		return cpuCgroup{}, err
	}
	stat, err := readKeyed(filepath.Join(dir, "cpu.stat"))
	if err != nil {
		return cpuCgroup{}, err
	}
	c := cpuCgroup{periods: stat["nr_periods"], throttled: stat["nr_throttled"]}
	var quota, period string
	if v2 {
		max, err := os.ReadFile(filepath.Join(dir, "cpu.max"))
		if err != nil {
			return c, err
		}
		quota, period, _ = strings.Cut(strings.TrimSpace(string(max)), " ")
	} else {
		q, err := os.ReadFile(filepath.Join(dir, "cpu.cfs_quota_us"))
		if err != nil {
			return c, err
		}
		p, err := os.ReadFile(filepath.Join(dir, "cpu.cfs_period_us"))
		if err != nil {
			return c, err
		}
		quota, period = strings.TrimSpace(string(q)), strings.TrimSpace(string(p))
	}
	q, qerr := strconv.ParseFloat(quota, 64)
	p, perr := strconv.ParseFloat(period, 64)
	if qerr == nil && perr == nil && q > 0 && p > 0 {
		c.limitCores = q / p
	}
	return c, nil
}

// cgroupDir is the directory of pid's cgroup in the hierarchy of
// controller ("cpu", "memory"), and whether it is cgroup v2's.
func cgroupDir(pid int, controller string) (string, bool, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	if err != nil {
		return "", false, err
	}
	// "4:cpu,cpuacct:/kubepods/burstable/pod.../<id>" (v1) or "0::/..." (v2).
	var unified string
	for line := range strings.SplitSeq(string(data), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 {
			continue
		}
		if slices.Contains(strings.Split(f[1], ","), controller) {
			return filepath.Join("/sys/fs/cgroup", f[1], f[2]), false, nil
		}
		if f[0] == "0" && f[1] == "" {
			unified = f[2]
		}
	}
	if unified != "" {
		return filepath.Join("/sys/fs/cgroup", unified), true, nil
	}
	return "", false, fmt.Errorf("process %d: no %s cgroup in /proc/%d/cgroup", pid, controller, pid)
}

// hostCgroupName is the CPU cgroup the host's memcached is moved to, beside
// the real node's kubepods.
const hostCgroupName = "memcached-bench-host"

// weighLikePods moves the process hostPID into a CPU cgroup of its own,
// beside the kubepods cgroup that holds the pod process podPID, with the
// same weight (cpu.shares, or cpu.weight in v2) and no quota. Otherwise the
// host's memcached would compete for the CPU as each of its threads alone,
// with the weight of a whole cgroup, against the machine's other processes,
// whereas the pods share the one weight of kubepods: on a busy machine that
// favours the host, which a node running only pods does not. It returns a
// function that removes the cgroup once the process has exited.
func weighLikePods(hostPID, podPID int) (func() error, error) {
	podDir, v2, err := cgroupDir(podPID, "cpu")
	if err != nil {
		return nil, err
	}
	kubepods := podDir
	for filepath.Base(kubepods) != "kubepods" && filepath.Base(kubepods) != "kubepods.slice" {
		if kubepods == filepath.Dir(kubepods) {
			return nil, fmt.Errorf("pod process %d is in no kubepods cgroup: %s", podPID, podDir)
		}
		kubepods = filepath.Dir(kubepods)
	}
	weightFile := "cpu.shares"
	if v2 {
		weightFile = "cpu.weight"
	}
	weight, err := os.ReadFile(filepath.Join(kubepods, weightFile))
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(filepath.Dir(kubepods), hostCgroupName)
	// A bench killed before its cleanup leaves the cgroup, empty.
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, err
	}
	remove := func() error { return os.Remove(dir) }
	if err := os.WriteFile(filepath.Join(dir, weightFile), weight, 0o644); err != nil {
		return nil, errors.Join(err, remove())
	}
	if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(hostPID)), 0o644); err != nil {
		return nil, errors.Join(err, remove())
	}
	return remove, nil
}
