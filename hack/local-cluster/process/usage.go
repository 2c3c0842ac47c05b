package process

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// clockTicks is USER_HZ, the unit of utime and stime in /proc/<pid>/stat:
// 100 on every Linux architecture Go supports (it is part of the ABI, unlike
// the kernel's HZ).
const clockTicks = 100

// Usage is what /proc says about a process at one moment.
type Usage struct {
	At time.Time
	// CPUSeconds is user + system time since the process started.
	CPUSeconds float64
	// RSSBytes is the resident set now (VmRSS); PeakRSSBytes the largest
	// it has been (VmHWM).
	RSSBytes, PeakRSSBytes int64
	// FileRSSBytes is the part of RSSBytes that maps files (RssFile),
	// mostly the binary's own pages: the kernel can drop and reread them,
	// so they are not memory the process asked for.
	FileRSSBytes int64
}

// Usage reads the operator's CPU time and memory, measured from outside as
// a kubelet's cAdvisor would.
func (p *Process) Usage() (Usage, error) { return ReadUsage(p.PID()) }

// ReadUsage reads the CPU time and memory of the process pid.
func ReadUsage(pid int) (Usage, error) {
	u := Usage{At: time.Now()}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return u, err
	}
	// The command name, in parentheses, may hold spaces: count fields
	// from the last ')'. Field 3 (state) comes first, utime is field 14
	// and stime field 15.
	i := strings.LastIndexByte(string(stat), ')')
	fields := strings.Fields(string(stat[i+1:]))
	if len(fields) < 13 {
		return u, fmt.Errorf("/proc/%d/stat: too few fields", pid)
	}
	utime, err1 := strconv.ParseInt(fields[11], 10, 64)
	stime, err2 := strconv.ParseInt(fields[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return u, fmt.Errorf("/proc/%d/stat: %w", pid, err)
	}
	u.CPUSeconds = float64(utime+stime) / clockTicks
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return u, err
	}
	for line := range strings.SplitSeq(string(status), "\n") {
		key, value, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		var dst *int64
		switch key {
		case "VmRSS":
			dst = &u.RSSBytes
		case "VmHWM":
			dst = &u.PeakRSSBytes
		case "RssFile":
			dst = &u.FileRSSBytes
		default:
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(value), " kB"), 10, 64)
		if err != nil {
			return u, fmt.Errorf("/proc/%d/status %s: %w", pid, key, err)
		}
		*dst = kb << 10
	}
	return u, nil
}
