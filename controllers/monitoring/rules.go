package monitoring

import (
	"fmt"
	"strings"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// runbookBaseURL is where every alert's runbook_url points: the runbooks in
// docs/monitoring/runbooks, one file per alert, named after it.
const runbookBaseURL = "https://github.com/example-inc/memcached-operator/blob/main/docs/monitoring/runbooks/"

// Thresholds of the alerts, with why each is where it is.
const (
	// connectionsNearLimit is the share of maxConnections above which
	// MemcachedConnectionsNearLimit warns. A client Deployment's rolling
	// update (maxSurge 25 % by default) opens its new pods' pools before the
	// old pods close theirs, so a cache above 80 % can run out of
	// connections during the next deploy of its clients. memcached refuses
	// connections a little before the limit itself (the operator's
	// benchmarks saw 999 of 1024 accepted: it keeps some for its listeners
	// and itself), so the warning must come well before 100 %.
	connectionsNearLimit = "0.8"

	// memoryFull is memcached's bytes/limit_maxbytes at and above which its
	// memory counts as full. Items sit in slab chunks larger than the items,
	// so a full memcached never reports 100 %: filled until it evicted, the
	// operator's benchmarks (docs/benchmarks.md) saw 87.6 to 88.6 % at 64Mi,
	// 256Mi and 1Gi. 80 % is under all of them.
	memoryFull = "0.8"

	// hitRatioCollapse is the fraction of its hit ratio of an hour ago under
	// which a Memcached's get hit ratio has collapsed: halved, not a dip.
	hitRatioCollapse = "0.5"

	// minGetsPerSecond is the get traffic a Memcached needs, now and an hour
	// ago, for its hit ratio to count. Below one get a second a handful of
	// misses moves the ratio by whole percents, and an idle cache has no
	// ratio worth waking anyone for.
	minGetsPerSecond = "1"
)

// Rules returns the alerting rules of the Memcached name in namespace: the
// spec of the PrometheusRule the operator keeps beside it. Every expression
// reads only that Memcached's series, which carry `namespace` and
// `memcached` (the PodMonitor's relabelings add the second), so one
// Memcached's rules never fire on another's. The series are the exporter
// sidecar's (prometheus/memcached_exporter) and Prometheus's own `up` of the
// same targets.
func Rules(namespace, name string) monitoringv1.PrometheusRuleSpec {
	s := selector{namespace: namespace, memcached: name}
	return monitoringv1.PrometheusRuleSpec{Groups: []monitoringv1.RuleGroup{{
		Name: "memcached." + namespace + "." + name,
		Rules: []monitoringv1.Rule{
			// A pod's memcached is down when its exporter says so, or
			// when the exporter itself does not answer (then no
			// memcached_up is scraped and `up` is 0). Five minutes
			// outlast a container restart and a pod's replacement in a
			// rollout, which MemcachedRestarted reports on its own.
			alert("MemcachedDown", "warning", "5m", expr("(%s or %s) == 0", s.series("memcached_up"), s.series("up")),
				"A memcached pod does not answer.",
				inPod+"has not answered its exporter for 5 minutes: the keys its clients shard to that pod all miss."),
			// Every pod down: the whole cache is gone, not a share of
			// its keys, so this one pages.
			alert("MemcachedUnavailable", "critical", "5m", expr("max by (namespace, memcached) (%s or %s) == 0",
				s.series("memcached_up"), s.series("up")),
				"No memcached pod of a Memcached answers.",
				"No memcached pod of Memcached {{ $labels.namespace }}/{{ $labels.memcached }} has answered for 5 minutes: "+
					"every get of its clients misses and every set fails."),
			// Fifteen minutes, so a burst of short connections (a client
			// restarting its pool) does not warn.
			alert("MemcachedConnectionsNearLimit", "warning", "15m", expr("%s / %s > %s",
				s.series("memcached_current_connections"), s.series("memcached_max_connections"), connectionsNearLimit),
				"A memcached pod is near its connection limit.",
				inPod+"has used {{ $value | humanizePercentage }} of its connection limit (spec.maxConnections) for 15 minutes."),
			// memcached 1.6 refuses a connection over its limit at once
			// (maxconns_fast: rejected_connections); it stops accepting
			// (listen_disabled_num) when it runs out of file descriptors.
			// Either means clients failed to connect in the last five
			// minutes: no waiting.
			alert("MemcachedConnectionsRefused", "warning", "", expr("increase(%s[5m]) > 0 or increase(%s[5m]) > 0",
				s.series("memcached_connections_rejected_total"), s.series("memcached_connections_listener_disabled_total")),
				"A memcached pod refuses connections.",
				inPod+"refused connections or stopped accepting them in the last 5 minutes: it is at its connection limit "+
					"(spec.maxConnections), and clients that could not connect miss or fail."),
			// Evictions are how a cache makes room, but evicting for
			// fifteen minutes with its memory full means the working set
			// does not fit: items leave before their expiry and come back
			// as misses. The memory condition tells this apart from
			// evictions with memory to spare (one slab class starved,
			// which more memory does not cure).
			alert("MemcachedEvictingWhenFull", "warning", "15m", expr("rate(%s[5m]) > 0 and %s / %s > %s",
				s.series("memcached_items_evicted_total"),
				s.series("memcached_current_bytes"), s.series("memcached_limit_bytes"), memoryFull),
				"A memcached pod evicts items because its memory is full.",
				inPod+"has evicted {{ printf \"%.3g\" $value }} items/s for 15 minutes with its memory (spec.memory) full: "+
					"items leave before they expire and come back as misses."),
			// One oversized value now and then is a client's business;
			// refusals for fifteen minutes are a size the cache was meant
			// to hold.
			alert("MemcachedItemsTooLarge", "warning", "15m", expr("rate(%s[5m]) > 0", s.series("memcached_item_too_large_total")),
				"A memcached pod refuses items larger than its maximum item size.",
				inPod+"has refused {{ printf \"%.3g\" $value }} sets/s for 15 minutes of items over its maximum item size "+
					"(spec.maxItemSize): those keys are never cached."),
			// A set that finds no memory answers the client with an
			// error (SERVER_ERROR out of memory), unlike an eviction, so
			// it waits less.
			alert("MemcachedOutOfMemory", "warning", "5m", expr("rate(%s[5m]) > 0", s.series("memcached_item_no_memory_total")),
				"A memcached pod fails sets for lack of memory.",
				inPod+"has failed {{ printf \"%.3g\" $value }} sets/s for 5 minutes with \"out of memory\": "+
					"it found no memory to evict for them (spec.memory, spec.maxItemSize)."),
			// memcached_uptime_seconds is a counter that drops to zero
			// when memcached starts again in the same pod (a crash, an
			// OOM kill, a failed liveness probe); a new pod of a rollout
			// is a new series and no reset. Each restart empties that
			// pod's cache, so each one is worth knowing about; the
			// alert clears 15 minutes after the last.
			alert("MemcachedRestarted", "warning", "", expr("resets(%s[15m]) > 0", s.series("memcached_uptime_seconds")),
				"A memcached pod restarted and lost its cache.",
				inPod+"restarted {{ $value }} time(s) in the last 15 minutes: each restart emptied that pod's cache."),
			// The get hit ratio of the whole Memcached against its own of
			// an hour ago: a flush, a client that changed its keys, or
			// pods that lost their items. Comparing with the past, not a
			// fixed ratio, suits caches whose normal ratio is 99 % and
			// those where it is 40 %. Fifteen minutes let a cache warm up
			// again after a pod's restart.
			alert("MemcachedHitRatioCollapsed", "warning", "15m", expr("%s < %s * %s and %s > %s and %s > %s", s.hitRatio(""), hitRatioCollapse, s.hitRatio("1h"), s.getRate(""), minGetsPerSecond, s.getRate("1h"), minGetsPerSecond),
				"A Memcached's hit ratio collapsed.",
				"The get hit ratio of Memcached {{ $labels.namespace }}/{{ $labels.memcached }} has been "+
					"{{ $value | humanizePercentage }} for 15 minutes, less than half of what it was an hour before."),
		},
	}}}
}

// selector builds the expressions of one Memcached's series.
type selector struct {
	namespace, memcached string
}

// series is metric restricted to the Memcached's series, and to extra
// matchers when given. %q quotes as PromQL does for these names (DNS labels).
func (s selector) series(metric string, extra ...string) string {
	matchers := append([]string{fmt.Sprintf("namespace=%q", s.namespace), fmt.Sprintf("memcached=%q", s.memcached)}, extra...)
	return metric + "{" + strings.Join(matchers, ",") + "}"
}

// getRate is the Memcached's gets per second over 10 minutes, offset by
// offset ("" for now).
func (s selector) getRate(offset string) string {
	return s.sumOfRate(offset, `command="get"`)
}

// hitRatio is the share of the Memcached's gets that hit, over 10 minutes,
// offset by offset ("" for now).
func (s selector) hitRatio(offset string) string {
	return "(" + s.sumOfRate(offset, `command="get"`, `status="hit"`) + " / " + s.getRate(offset) + ")"
}

func (s selector) sumOfRate(offset string, matchers ...string) string {
	window := "[10m]"
	if offset != "" {
		window += " offset " + offset
	}
	return "sum by (namespace, memcached) (rate(" + s.series("memcached_commands_total", matchers...) + window + "))"
}

func expr(format string, args ...any) intstr.IntOrString {
	return intstr.FromString(fmt.Sprintf(format, args...))
}

// inPod begins the description of an alert on one pod.
const inPod = "memcached in pod {{ $labels.pod }} of Memcached {{ $labels.namespace }}/{{ $labels.memcached }} "

// alert is the rule name: expression true for forDuration ("" fires at
// once), with its severity, what it says, and its runbook.
func alert(name, severity string, forDuration monitoringv1.Duration, expression intstr.IntOrString, summary, description string) monitoringv1.Rule {
	r := monitoringv1.Rule{
		Alert:  name,
		Expr:   expression,
		Labels: map[string]string{"severity": severity},
		Annotations: map[string]string{
			"summary":     summary,
			"description": description,
			"runbook_url": runbookBaseURL + name + ".md",
		},
	}
	if forDuration != "" {
		r.For = &forDuration
	}
	return r
}
