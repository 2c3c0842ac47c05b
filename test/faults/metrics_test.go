package faults

import (
	"strconv"
	"strings"
	"testing"
)

// metricSum adds up the samples of the metric name, in the Prometheus text
// format, whose label set holds every one of labels (`key="value"`). The
// suite reads one counter and one gauge, so a scan of the lines does; a
// Prometheus parser would be a direct dependency the operator does not have.
func metricSum(text, name string, labels ...string) float64 {
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

func TestMetricSum(t *testing.T) {
	text := `# HELP controller_runtime_reconcile_total Total number of reconciliations per controller
# TYPE controller_runtime_reconcile_total counter
controller_runtime_reconcile_total{controller="memcached",result="error"} 2
controller_runtime_reconcile_total{controller="memcached",result="success"} 40
controller_runtime_reconcile_total{controller="other",result="success"} 7
controller_runtime_reconcile_totally_else{controller="memcached"} 100
leader_election_master_status{name="memcached-operator.cache.example.com"} 1
process_open_fds 12
`
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"controller_runtime_reconcile_total", []string{`controller="memcached"`}, 42},
		{"controller_runtime_reconcile_total", nil, 49},
		{"controller_runtime_reconcile_total", []string{`controller="absent"`}, 0},
		{"leader_election_master_status", nil, 1},
		{"process_open_fds", nil, 12},
	} {
		if got := metricSum(text, c.name, c.labels...); got != c.want {
			t.Errorf("metricSum(%s, %v) = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
}
