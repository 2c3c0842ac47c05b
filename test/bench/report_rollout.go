package main

import (
	"fmt"
	"strings"
)

// sustainedSeconds is the window of the report's second lowest hit ratio:
// a dip that lasts, as misses piling up do, against one that passes.
const sustainedSeconds = 10

// rolloutReport is the rollout scenario's generated section: the run, a
// row per pacing, the pods' warm-ups and the target with its verdict.
func rolloutReport(r *rolloutResults) string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	c := r.Config
	fields := "every other field at its default"
	if c.WarmupTimeout != "" {
		fields = "spec.rollout.warmupTimeout " + c.WarmupTimeout + ", every other field at its default"
	}
	p("\nRun of %s UTC, `%s`; the scenario took %s. For each pacing, a Memcached of size %d, %s, "+
		"runs on the real node. The client lists the ready addresses of its Service's EndpointSlices "+
		"every %s, shards %s keys over them by rendezvous hashing, stores every key once, then reads keys of Zipf popularity (s = %g) "+
		"at %s gets/s over %d connections per server, storing each key it misses. After %s, the change (%s) rolls every pod; "+
		"the load goes on for %s after the rollout. A get to an address that refuses it counts as a miss.\n\n",
		r.StartedAt.UTC().Format("2006-01-02 15:04"), r.Command, duration(r.DurationSeconds), c.Size, fields,
		discoveryInterval, thousands(c.Keys), c.ZipfS, thousands(c.GetsPerSecond), c.Workers, duration(c.SteadySeconds), c.Change,
		duration(c.TailSeconds))
	b.WriteString(machineTable(r.Machine))
	sustained := int(sustainedSeconds / c.BucketSeconds)
	p("| pacing | rollout took | hit ratio before the change | lowest hit ratio over %g s (when, after the change) | lowest over %g s | hit ratio from the change to the rollout's end | failed gets | fewest addresses / changes of the list |\n",
		c.BucketSeconds, float64(sustained)*c.BucketSeconds)
	p("|---|---|---|---|---|---|---|---|\n")
	for _, x := range r.Cases {
		name := x.Pacing
		if x.Error != "" {
			name += " (failed: " + firstLine(x.Error) + ")"
		}
		before := x.span(c.BucketSeconds, 0, x.ChangedAt)
		during := x.span(c.BucketSeconds, x.ChangedAt, x.DoneAt)
		lowest, at := x.lowest(c.BucketSeconds, 1)
		lowestSustained, atSustained := x.lowest(c.BucketSeconds, sustained)
		fewest, changes := x.fewestServers()
		p("| %s | %s | %.1f %% | %.1f %% (%.0f s) | %.1f %% (%.0f s) | %.1f %% | %s | %d / %d |\n", name, duration(x.DoneAt-x.ChangedAt),
			before.hitRatio(), lowest, at, lowestSustained, atSustained, during.hitRatio(), thousands(int(during.Errors)), fewest, changes)
	}
	p("\n![Hit ratio over time](bench/rollout.svg)\n\n")
	p("| pacing | the client's address list after the change: each address added (+) or removed (-), seconds after the change |\n|---|---|\n")
	for _, x := range r.Cases {
		p("| %s | %s |\n", x.Pacing, strings.Join(x.listChanges(), ", "))
	}
	p("\n")
	p("| pacing | pod the rollout started | ready after its containers | reason | the operator's last reading |\n|---|---|---|---|---|\n")
	for _, x := range r.Cases {
		for _, pod := range x.Pods {
			p("| %s | %s | %s | %s | %s |\n", x.Pacing, pod.Name, duration(pod.Waited), pod.Reason, pod.Message)
		}
	}
	b.WriteString(targetTable(r.Targets))
	return b.String()
}
