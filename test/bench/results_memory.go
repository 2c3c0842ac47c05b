package main

import (
	"fmt"
	"strings"
)

// headroomTarget is the share of its memory limit a filled memcached must
// leave unused: below it, the overhead formula (controllers/operand) is too
// tight for what the kernel charges the container, and a burst of
// connections or a hash table's growth would reach the limit.
const headroomTarget = 0.10

// memoryResults is what -memory-out holds: the memory scenario's run, in a
// file of its own, as it needs root and the real node and is published by
// a run of its own (make bench-memory).
type memoryResults = caseResults[memoryConfig, memoryCase]

// memoryConfig is the load, the same for every case.
type memoryConfig struct {
	SmallValueBytes int `json:"smallValueBytes"`
	// Batch is how many small sets a writer pipelines, TLSBatch the same
	// over TLS.
	Batch         int     `json:"batch"`
	TLSBatch      int     `json:"tlsBatch"`
	WritersPerThr int     `json:"writersPerThread"`
	Turnover      float64 `json:"turnover"`
	// LargeHeadroomBytes is how much smaller than maxItemSize the large
	// values are, for the item's header and key.
	LargeHeadroomBytes int     `json:"largeHeadroomBytes"`
	LargeFill          float64 `json:"largeFill"`
	// Cgroup is "v1" or "v2": whether the peak includes socket buffers.
	Cgroup string `json:"cgroup"`
}

// memoryCase is one Memcached filled: its settings, what the operator gave
// its pod, what the kernel charged the container, and memcached's stats.
type memoryCase struct {
	Name   string `json:"name"`
	Memory string `json:"memory"`
	TLS    bool   `json:"tls"`
	// MemcachedCommand is the pod's command line.
	MemcachedCommand []string `json:"memcachedCommand"`
	MaxConnections   int64    `json:"maxConnections"`
	Threads          int64    `json:"threads"`
	MaxItemSize      int64    `json:"maxItemSize"`
	// MemoryBytes is spec.memory, memcached's --memory-limit.
	MemoryBytes int64 `json:"memoryBytes"`
	// MemoryRequest and MemoryLimit are the container's, as the operator
	// derived them; OverheadBytes what the formula allows beside the items
	// (operand.Overhead), the request being memory plus that.
	MemoryRequest string `json:"memoryRequest"`
	MemoryLimit   string `json:"memoryLimit"`
	OverheadBytes int64  `json:"overheadBytes"`
	// Cgroup is the container's memory cgroup after the fill.
	Cgroup memoryFigures `json:"cgroup"`
	// Restarts is the memcached container's restart count, LastTermination
	// why it last ended (OOMKilled), when it did.
	Restarts        int32      `json:"restarts"`
	LastTermination string     `json:"lastTermination,omitempty"`
	Fill            fillResult `json:"fill"`
	// Stats are memcached's own counters after the fill.
	Stats   map[string]string `json:"stats"`
	Seconds float64           `json:"seconds"`
	// Error is why the case failed, if it did.
	Error string `json:"error,omitempty"`
}

// headroom is the share of the limit the peak left unused.
func (c memoryCase) headroom() float64 {
	if c.Cgroup.LimitBytes == 0 {
		return 0
	}
	return 1 - float64(c.Cgroup.PeakBytes)/float64(c.Cgroup.LimitBytes)
}

// oomKilled reports whether the kernel killed memcached for its memory.
func (c memoryCase) oomKilled() bool {
	return c.Cgroup.OOMKills > 0 || c.LastTermination == "OOMKilled"
}

// failures are why a case fails the scenario: an OOM kill, a restart, no
// eviction (memcached never filled), or an error of the run.
func (c memoryCase) failures() []string {
	var out []string
	if c.oomKilled() {
		out = append(out, "OOM-killed")
	}
	if c.Restarts > 0 {
		out = append(out, fmt.Sprintf("%d restarts (last: %s)", c.Restarts, c.LastTermination))
	}
	if c.Error == "" && statInt(c.Stats, "evictions") == 0 {
		out = append(out, "no evictions")
	}
	if c.Error != "" {
		out = append(out, c.Error)
	}
	return out
}

func memoryFailures(r *memoryResults) []string {
	var out []string
	for _, c := range r.Cases {
		if f := c.failures(); len(f) > 0 {
			out = append(out, c.Name+": "+strings.Join(f, ", "))
		}
	}
	return out
}

// evaluateMemoryTargets holds each case to the limit: the peak at least
// headroomTarget under it, with no OOM kill or restart, and evictions. The
// request (spec.memory plus the formula's overhead) is what a full cache
// uses at rest; the limit keeps room beyond it for every connection busy at
// once, which is what the fill does, so the peak may pass the request.
func evaluateMemoryTargets(r *memoryResults) []target {
	var out []target
	for _, c := range r.Cases {
		out = append(out, target{
			Name:   c.Name + ": peak of the container's memory",
			Target: fmt.Sprintf(">= %.0f %% under the limit; no OOM kill or restart; evictions", 100*headroomTarget),
			Value: fmt.Sprintf("%.1f MiB of %.0f MiB (%.1f %% headroom; request %.0f MiB); %d OOM kills, %d restarts, %s evictions",
				mib(c.Cgroup.PeakBytes), mib(c.Cgroup.LimitBytes), 100*c.headroom(), mib(c.MemoryBytes+c.OverheadBytes),
				c.Cgroup.OOMKills, c.Restarts, thousands(int(statInt(c.Stats, "evictions")))),
			// The failures fail the scenario itself; the headroom is a
			// verdict, as the peak moves a little from run to run.
			Met: c.headroom() >= headroomTarget && len(c.failures()) == 0,
		})
	}
	return out
}
