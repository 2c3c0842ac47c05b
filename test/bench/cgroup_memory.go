package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// memoryCgroup is the memory controller's cgroup of a container, v1 (the
// memory hierarchy of a hybrid host) or v2.
type memoryCgroup struct {
	dir string
	v2  bool
}

// memoryFigures are what a container's memory cgroup says: what the kernel
// holds the container to, not what memcached believes it uses.
type memoryFigures struct {
	// LimitBytes is the limit the kubelet set; UsageBytes the usage when
	// read; PeakBytes the highest usage since the container started
	// (v1 memory.max_usage_in_bytes, v2 memory.peak).
	LimitBytes int64 `json:"limitBytes"`
	UsageBytes int64 `json:"usageBytes"`
	PeakBytes  int64 `json:"peakBytes"`
	// Failcnt counts the times the usage reached the limit and the kernel
	// had to reclaim (v1 memory.failcnt, v2 the "max" of memory.events):
	// above zero, the container touched its limit.
	Failcnt int64 `json:"failcnt"`
	// OOMKills counts the processes the kernel's OOM killer killed in the
	// cgroup (v1 memory.oom_control, v2 memory.events).
	OOMKills int64 `json:"oomKills"`
	// AnonBytes is anonymous memory (memcached's heap, v1 rss, v2 anon),
	// FileBytes page cache (the binary and libraries it maps, v1 cache, v2
	// file), KernelBytes kernel memory charged to the container (v1
	// memory.kmem.usage_in_bytes, v2 kernel), when read.
	AnonBytes   int64 `json:"anonBytes"`
	FileBytes   int64 `json:"fileBytes"`
	KernelBytes int64 `json:"kernelBytes"`
	// SocketPeakBytes is the peak of the TCP socket buffers of the
	// container's connections. cgroup v1 keeps them apart
	// (memory.kmem.tcp.*, counted once accountTCP turned it on) and outside
	// the limit; cgroup v2 charges them to the usage, where there is no peak
	// of their own, so v2 reports the buffers when read (memory.stat sock).
	SocketPeakBytes int64 `json:"socketPeakBytes"`
	// SocketsInLimit says whether the socket buffers count against the
	// limit: cgroup v2 (true) or v1 (false).
	SocketsInLimit bool `json:"socketsInLimit"`
}

func openMemoryCgroup(pid int) (memoryCgroup, error) {
	dir, v2, err := cgroupDir(pid, "memory")
	if err != nil {
		return memoryCgroup{}, err
	}
	return memoryCgroup{dir: dir, v2: v2}, nil
}

// accountTCP makes cgroup v1 count the TCP buffers of the sockets the
// container creates or accepts from now on, with no limit (-1), so that
// read reports what a cgroup v2 node would charge to the container besides
// what v1 charges. cgroup v1 counts them only once a TCP limit has been
// written, and never against the memory limit; v2 always counts them.
func (m memoryCgroup) accountTCP() error {
	if m.v2 {
		return nil
	}
	return os.WriteFile(filepath.Join(m.dir, "memory.kmem.tcp.limit_in_bytes"), []byte("-1"), 0o644)
}

func (m memoryCgroup) read() (memoryFigures, error) {
	if m.v2 {
		return m.readV2()
	}
	var f memoryFigures
	var errs []error
	num := func(name string) int64 {
		n, err := readInt(filepath.Join(m.dir, name))
		errs = append(errs, err)
		return n
	}
	f.LimitBytes = num("memory.limit_in_bytes")
	f.UsageBytes = num("memory.usage_in_bytes")
	f.PeakBytes = num("memory.max_usage_in_bytes")
	f.Failcnt = num("memory.failcnt")
	f.KernelBytes = num("memory.kmem.usage_in_bytes")
	f.SocketPeakBytes = num("memory.kmem.tcp.max_usage_in_bytes")
	oom, err := readKeyed(filepath.Join(m.dir, "memory.oom_control"))
	errs = append(errs, err)
	f.OOMKills = oom["oom_kill"]
	stat, err := readKeyed(filepath.Join(m.dir, "memory.stat"))
	errs = append(errs, err)
	f.AnonBytes, f.FileBytes = stat["rss"], stat["cache"]
	return f, errors.Join(errs...)
}

func (m memoryCgroup) readV2() (memoryFigures, error) {
	f := memoryFigures{SocketsInLimit: true}
	var errs []error
	limit, err := os.ReadFile(filepath.Join(m.dir, "memory.max"))
	errs = append(errs, err)
	if s := strings.TrimSpace(string(limit)); s != "max" && err == nil {
		f.LimitBytes, err = strconv.ParseInt(s, 10, 64)
		errs = append(errs, err)
	}
	f.UsageBytes, err = readInt(filepath.Join(m.dir, "memory.current"))
	errs = append(errs, err)
	f.PeakBytes, err = readInt(filepath.Join(m.dir, "memory.peak"))
	errs = append(errs, err)
	events, err := readKeyed(filepath.Join(m.dir, "memory.events"))
	errs = append(errs, err)
	f.Failcnt, f.OOMKills = events["max"], events["oom_kill"]
	stat, err := readKeyed(filepath.Join(m.dir, "memory.stat"))
	errs = append(errs, err)
	f.AnonBytes, f.FileBytes, f.KernelBytes, f.SocketPeakBytes = stat["anon"], stat["file"], stat["kernel"], stat["sock"]
	return f, errors.Join(errs...)
}

// exists reports whether the cgroup is still there: the kubelet removes a
// container's cgroup when the container ends, as when the OOM killer ended
// it.
func (m memoryCgroup) exists() bool {
	_, err := os.Stat(m.dir)
	return !errors.Is(err, fs.ErrNotExist)
}

func readInt(path string) (int64, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	return n, nil
}

// readKeyed reads a file of "key value" lines, such as memory.stat.
func readKeyed(path string) (map[string]int64, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return parseKeyed(string(data)), nil
}

func parseKeyed(s string) map[string]int64 {
	out := map[string]int64{}
	for line := range strings.SplitSeq(s, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), " ")
		if !ok {
			continue
		}
		if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
			out[k] = n
		}
	}
	return out
}
