package scrape

import "testing"

func TestSum(t *testing.T) {
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
		labels map[string]string
		want   float64
	}{
		{"controller_runtime_reconcile_total", map[string]string{"controller": "memcached"}, 42},
		{"controller_runtime_reconcile_total", nil, 49},
		{"controller_runtime_reconcile_total", map[string]string{"controller": "absent"}, 0},
		{"leader_election_master_status", nil, 1},
		{"process_open_fds", nil, 12},
	} {
		m, err := Parse(text)
		if err != nil {
			t.Fatal(err)
		}
		if got := m.Sum(c.name, c.labels); got != c.want {
			t.Errorf("Sum(%s, %v) = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
}
