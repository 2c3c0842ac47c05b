package main

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/example-inc/memcached-operator/test/framework/memload"
)

// The memcached scenario's goal (issue #33): a pod at the operator's
// defaults serves at least this share of the host's throughput, with a p99
// latency at most this many times the host's.
const (
	throughputRatioTarget = 0.9
	p99RatioTarget        = 1.5
)

// memcachedResults is what -memcached-out holds: the memcached scenario's
// run. It is a file of its own, apart from the control plane's results,
// because it needs root and the real node and is published by a run of its
// own (make bench-memcached), which must not drop the others' figures.
type memcachedResults struct {
	runInfo
	Config memcachedConfig `json:"config"`
	// Host is the memcached on the host, with no cgroup limit; Pods the
	// pods, the operator's defaults first.
	Host    memcachedFigures `json:"host"`
	Pods    []podFigures     `json:"pods"`
	Targets []target         `json:"targets"`
}

type memcachedConfig struct {
	// MemcachedCommand is the pods' command line, which the host's
	// memcached runs too (listening on loopback only).
	MemcachedCommand []string `json:"memcachedCommand"`
	Connections      int      `json:"connections"`
	Keys             int      `json:"keys"`
	ValueBytes       int      `json:"valueBytes"`
	GetPercent       float64  `json:"getPercent"`
	PhaseSeconds     float64  `json:"phaseSeconds"`
	Rounds           int      `json:"rounds"`
}

// memcachedFigures are one memcached's phases together.
type memcachedFigures struct {
	OpsPerSecond float64 `json:"opsPerSecond"`
	// RoundsOpsPerSecond are each round's.
	RoundsOpsPerSecond []float64 `json:"roundsOpsPerSecond"`
	Gets               int64     `json:"gets"`
	Sets               int64     `json:"sets"`
	Misses             int64     `json:"misses"`
	Seconds            float64   `json:"seconds"`
	P50Micros          float64   `json:"p50Micros"`
	P99Micros          float64   `json:"p99Micros"`
	P999Micros         float64   `json:"p999Micros"`
	MaxMicros          float64   `json:"maxMicros"`
	// CPUSeconds is memcached's CPU over the phases, Cores the same per
	// second of load.
	CPUSeconds float64 `json:"cpuSeconds"`
	Cores      float64 `json:"cores"`
}

// podFigures are a pod's figures, its resources and its ratios to the host.
type podFigures struct {
	Name string `json:"name"`
	memcachedFigures
	CPURequest    string `json:"cpuRequest"`
	CPULimit      string `json:"cpuLimit"`
	MemoryRequest string `json:"memoryRequest"`
	MemoryLimit   string `json:"memoryLimit"`
	// CgroupCPULimitCores is the CFS quota of the container's cgroup (0:
	// none); Periods and ThrottledPeriods count the CFS periods it ran in
	// during the load, and those in which it was throttled.
	CgroupCPULimitCores float64 `json:"cgroupCPULimitCores"`
	Periods             int64   `json:"periods"`
	ThrottledPeriods    int64   `json:"throttledPeriods"`
	// ThroughputRatio is the pod's ops/s over the host's; P99Ratio its
	// p99 latency over the host's.
	ThroughputRatio float64 `json:"throughputRatio"`
	P99Ratio        float64 `json:"p99Ratio"`
}

// memcachedFiguresOf sums up the scenario; targets[0] is the host.
func memcachedFiguresOf(targets []*loadTarget, command []string, load memload.Options, rounds int) *memcachedResults {
	r := &memcachedResults{
		Config: memcachedConfig{
			MemcachedCommand: command, Connections: load.Connections, Keys: load.Keys, ValueBytes: load.ValueSize,
			GetPercent: 100 * float64(load.SetEvery-1) / float64(load.SetEvery), PhaseSeconds: load.Duration.Seconds(), Rounds: rounds,
		},
		Host: targets[0].acc.figures(),
	}
	for _, t := range targets[1:] {
		f := t.acc.figures()
		quantity := func(l corev1.ResourceList, name corev1.ResourceName) string {
			if q, ok := l[name]; ok {
				return q.String()
			}
			return "none"
		}
		r.Pods = append(r.Pods, podFigures{
			Name: t.name, memcachedFigures: f,
			CPURequest: quantity(t.resources.Requests, corev1.ResourceCPU), CPULimit: quantity(t.resources.Limits, corev1.ResourceCPU),
			MemoryRequest: quantity(t.resources.Requests, corev1.ResourceMemory), MemoryLimit: quantity(t.resources.Limits, corev1.ResourceMemory),
			CgroupCPULimitCores: t.acc.limitCores, Periods: t.acc.periods, ThrottledPeriods: t.acc.throttled,
			ThroughputRatio: f.OpsPerSecond / r.Host.OpsPerSecond, P99Ratio: f.P99Micros / r.Host.P99Micros,
		})
	}
	return r
}

// evaluateMemcachedTargets holds the pod at the defaults to the goal.
func evaluateMemcachedTargets(r *memcachedResults) []target {
	if len(r.Pods) == 0 {
		return nil
	}
	p := r.Pods[0]
	return []target{{
		Name:   fmt.Sprintf("memcached pod at %s: throughput / the host's", p.Name),
		Target: fmt.Sprintf(">= %.1f", throughputRatioTarget),
		Value:  fmt.Sprintf("%.2f (%.0f against %.0f ops/s)", p.ThroughputRatio, p.OpsPerSecond, r.Host.OpsPerSecond),
		Met:    p.ThroughputRatio >= throughputRatioTarget,
	}, {
		Name:   fmt.Sprintf("memcached pod at %s: p99 latency / the host's", p.Name),
		Target: fmt.Sprintf("<= %.1f", p99RatioTarget),
		Value:  fmt.Sprintf("%.2f (%.0f against %.0f µs)", p.P99Ratio, p.P99Micros, r.Host.P99Micros),
		Met:    p.P99Ratio <= p99RatioTarget,
	}}
}
