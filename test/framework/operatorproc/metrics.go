package operatorproc

import (
	"context"
	"strconv"
	"strings"
)

// MetricSum adds up the samples of the metric name, in the Prometheus text
// format, whose label set holds every one of labels (`key="value"`). The
// suite reads one counter and one gauge, so a scan of the lines does; a
// Prometheus parser would be a direct dependency the operator does not have.
func MetricSum(text, name string, labels ...string) float64 {
	var sum float64
	for line := range strings.SplitSeq(text, "\n") {
		rest, ok := strings.CutPrefix(line, name)
		if !ok || (rest != "" && rest[0] != '{' && rest[0] != ' ') {
			continue
		}
		matches := true
		for _, l := range labels {
			matches = matches && strings.Contains(rest, l)
		}
		fields := strings.Fields(rest[strings.LastIndex(rest, "}")+1:])
		if !matches || len(fields) == 0 {
			continue
		}
		if v, err := strconv.ParseFloat(fields[0], 64); err == nil {
			sum += v
		}
	}
	return sum
}

// Reconciles is controller_runtime_reconcile_total of the Memcached
// controller over every result, from plain-HTTP metrics; 0 while the
// controller has not started (a standby replica never starts it).
func (o *Operator) Reconciles(ctx context.Context) (float64, error) {
	text, err := o.Metrics(ctx)
	if err != nil {
		return 0, err
	}
	return MetricSum(text, "controller_runtime_reconcile_total", `controller="memcached"`), nil
}
