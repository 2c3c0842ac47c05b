package main

import (
	"bufio"
	"bytes"
	"fmt"
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
	dir, v2, err := cpuCgroupDir(pid)
	if err != nil {
		return cpuCgroup{}, err
	}
	var c cpuCgroup
	stat, err := os.ReadFile(filepath.Join(dir, "cpu.stat"))
	if err != nil {
		return c, err
	}
	for line := range strings.SplitSeq(string(stat), "\n") {
		k, v, _ := strings.Cut(line, " ")
		n, _ := strconv.ParseInt(v, 10, 64)
		switch k {
		case "nr_periods":
			c.periods = n
		case "nr_throttled":
			c.throttled = n
		}
	}
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

// cpuCgroupDir is the directory of pid's cgroup in the CPU controller's
// hierarchy, and whether it is cgroup v2's.
func cpuCgroupDir(pid int) (string, bool, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	if err != nil {
		return "", false, err
	}
	// "4:cpu,cpuacct:/kubepods/burstable/pod.../<id>" (v1) or "0::/..." (v2).
	var unified string
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f := strings.SplitN(sc.Text(), ":", 3)
		if len(f) != 3 {
			continue
		}
		if slices.Contains(strings.Split(f[1], ","), "cpu") {
			return filepath.Join("/sys/fs/cgroup", f[1], f[2]), false, nil
		}
		if f[0] == "0" && f[1] == "" {
			unified = f[2]
		}
	}
	if unified != "" {
		return filepath.Join("/sys/fs/cgroup", unified), true, nil
	}
	return "", false, fmt.Errorf("process %d: no CPU cgroup in /proc/%d/cgroup", pid, pid)
}
