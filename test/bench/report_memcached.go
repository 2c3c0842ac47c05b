package main

import (
	"fmt"
	"strings"
)

// memcachedReport is the memcached scenario's generated section: the run,
// one row per memcached and the goal's targets with the run's verdicts.
func memcachedReport(r *memcachedResults) string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	c := r.Config
	p("\nRun of %s UTC, `%s`, %s in all. memcached's command line, in the pods and on the host (there also `--listen=127.0.0.1`): `%s`. "+
		"The load (test/framework/memload), the same for each: %d connections, one request at a time each, %.0f %% gets over %s preloaded keys of %d bytes, "+
		"%d rounds of %.0f s per memcached, in turn.\n\n",
		r.StartedAt.UTC().Format("2006-01-02 15:04"), r.Command, duration(r.DurationSeconds), strings.Join(c.MemcachedCommand, " "),
		c.Connections, c.GetPercent, thousands(c.Keys), c.ValueBytes, c.Rounds, c.PhaseSeconds)
	b.WriteString(machineTable(r.Machine))
	p("| memcached | CPU request / limit | memory request / limit | ops/s (each round) | p50 | p99 | p99.9 | max | memcached's CPU | CFS periods throttled | ops/s / host's | p99 / host's |\n")
	p("|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	row := func(name, cpu, memory string, f memcachedFigures, throttled, ratios string) {
		rounds := make([]string, len(f.RoundsOpsPerSecond))
		for i, x := range f.RoundsOpsPerSecond {
			rounds[i] = thousands(int(x))
		}
		p("| %s | %s | %s | %s (%s) | %s | %s | %s | %s | %.2f cores | %s | %s |\n",
			name, cpu, memory, thousands(int(f.OpsPerSecond)), strings.Join(rounds, ", "),
			latency(f.P50Micros), latency(f.P99Micros), latency(f.P999Micros), latency(f.MaxMicros), f.Cores, throttled, ratios)
	}
	row("host: no CPU limit, the pods' CPU weight", "-", "-", r.Host, "-", "1 | 1")
	for _, x := range r.Pods {
		throttled := "no quota"
		if x.CgroupCPULimitCores > 0 {
			throttled = fmt.Sprintf("%s of %s (quota %.2f cores)", thousands(int(x.ThrottledPeriods)), thousands(int(x.Periods)), x.CgroupCPULimitCores)
		}
		row("pod at "+x.Name, x.CPURequest+" / "+x.CPULimit, x.MemoryRequest+" / "+x.MemoryLimit, x.memcachedFigures, throttled,
			fmt.Sprintf("%.2f | %.2f", x.ThroughputRatio, x.P99Ratio))
	}
	b.WriteString(targetTable(r.Targets))
	return b.String()
}

// latency is a latency in µs, or ms from one ms up.
func latency(micros float64) string {
	if micros < 1000 {
		return fmt.Sprintf("%.0f µs", micros)
	}
	return fmt.Sprintf("%.1f ms", micros/1e3)
}
