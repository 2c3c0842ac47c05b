package main

import (
	"fmt"
	"slices"
	"strings"
)

// memoryReport is the memory scenario's generated section: the run, one
// row per Memcached filled and the targets with the run's verdicts.
func memoryReport(r *memoryResults) string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	c := r.Config
	p("\nRun of %s UTC, `%s`; the scenario took %s. Each Memcached is created through the operator, with size 1, the memory of its row and "+
		"every other field at its default, and filled on the real node: as many connections opened as memcached accepts; "+
		"%d writers per thread pipelining %d-byte items, %s sets at a time (%d over TLS: see below), until memcached has evicted %.0f %% of the items it holds; "+
		"then every connection at once setting an item of maxItemSize less %s and reading it back, until %.1f times the memory was written. "+
		"Figures are read with every connection still open; the peak is the container's memory cgroup's (cgroup %s), since the container started.\n\n",
		r.StartedAt.UTC().Format("2006-01-02 15:04"), r.Command, duration(r.DurationSeconds),
		c.WritersPerThr, c.SmallValueBytes, thousands(c.Batch), c.TLSBatch, 100*c.Turnover, kibibytes(int64(c.LargeHeadroomBytes)), c.LargeFill, c.Cgroup)
	b.WriteString(machineTable(r.Machine))
	p("| Memcached | memory request / limit | peak | headroom | beside the items: peak less memory / the formula's | limit reached (failcnt) | socket buffers, peak%s | connections | small items sent | large items stored / out of memory | evictions | memcached's bytes / limit | hash table | OOM kills / restarts |\n",
		socketNote(c.Cgroup))
	p("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, x := range r.Cases {
		g := x.Cgroup
		name := x.Name
		if x.Error != "" {
			name += " (failed: " + firstLine(x.Error) + ")"
		}
		p("| %s | %s / %s | %.1f MiB | %.1f %% | %.1f MiB / %.0f MiB | %s | %.1f MiB | %s%s | %s | %s / %s | %s | %.1f / %.0f MiB | %s | %d / %d |\n",
			name, x.MemoryRequest, x.MemoryLimit, mib(g.PeakBytes), 100*x.headroom(),
			mib(g.PeakBytes-x.MemoryBytes), mib(x.OverheadBytes), thousands(int(g.Failcnt)), mib(g.SocketPeakBytes),
			thousands(x.Fill.Connections), refusedNote(x.Fill.Refused), thousands(int(x.Fill.SmallSets)),
			thousands(int(x.Fill.LargeStored)), thousands(int(x.Fill.LargeOutOfMemory)), thousands(int(statInt(x.Stats, "evictions"))),
			mib(statInt(x.Stats, "bytes")), mib(x.MemoryBytes), kibibytes(statInt(x.Stats, "hash_bytes")), g.OOMKills, x.Restarts)
	}
	if t := tlsCost(r.Cases); t != "" {
		p("\n%s\n", t)
	}
	b.WriteString(targetTable(r.Targets))
	return b.String()
}

// tlsCost is what serving TLS added to the peak, per connection held:
// against the plain case of the same memory and maxConnections, and
// between the TLS cases of fewest and most connections, beside what the
// derived limit keeps per connection.
func tlsCost(cases []memoryCase) string {
	var tlsCases []memoryCase
	for _, t := range cases {
		if t.TLS && t.Fill.Connections > 0 && t.Cgroup.PeakBytes > 0 {
			tlsCases = append(tlsCases, t)
		}
	}
	var out []string
	for _, t := range tlsCases {
		for _, c := range cases {
			if c.TLS || c.Memory != t.Memory || c.MaxConnections != t.MaxConnections || c.Cgroup.PeakBytes == 0 {
				continue
			}
			extra := t.Cgroup.PeakBytes - c.Cgroup.PeakBytes
			out = append(out, fmt.Sprintf("Serving TLS, the %s Memcached peaked %.1f MiB higher with %s connections open: %.1f KiB more per connection.",
				t.Memory, mib(extra), thousands(t.Fill.Connections), float64(extra)/float64(t.Fill.Connections)/1024))
		}
	}
	if len(tlsCases) >= 2 {
		slices.SortFunc(tlsCases, func(a, b memoryCase) int { return a.Fill.Connections - b.Fill.Connections })
		a, b := tlsCases[0], tlsCases[len(tlsCases)-1]
		if conns := b.Fill.Connections - a.Fill.Connections; conns > 0 && b.MaxConnections > a.MaxConnections {
			out = append(out, fmt.Sprintf("Each TLS connection open beyond %s cost %.1f KiB (%s connections against %s); "+
				"the derived limit keeps %.1f KiB per connection over TLS.",
				thousands(a.Fill.Connections), float64(b.Cgroup.PeakBytes-a.Cgroup.PeakBytes)/float64(conns)/1024,
				thousands(b.Fill.Connections), thousands(a.Fill.Connections),
				float64(b.Cgroup.LimitBytes-a.Cgroup.LimitBytes)/float64(b.MaxConnections-a.MaxConnections)/1024))
		}
	}
	return strings.Join(out, " ")
}

// socketNote says where cgroup v1 keeps the socket buffers: outside the
// usage and the limit, which cgroup v2 does not.
func socketNote(cgroup string) string {
	if cgroup == "v1" {
		return " (apart from the peak and the limit in cgroup v1; v2 would add them)"
	}
	return " (in the usage and the limit)"
}

// refusedNote marks a connection count that memcached capped.
func refusedNote(refused bool) string {
	if refused {
		return " (the next refused)"
	}
	return ""
}

// kibibytes is n bytes in KiB, or MiB from one MiB up.
func kibibytes(n int64) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%.1f MiB", mib(n))
	}
	return fmt.Sprintf("%d KiB", n>>10)
}
