package main

import (
	"math"
	"slices"
	"testing"
)

const scrapeText = `# HELP apiserver_admission_webhook_admission_duration_seconds [STABLE] Admission webhook latency
# TYPE apiserver_admission_webhook_admission_duration_seconds histogram
apiserver_admission_webhook_admission_duration_seconds_bucket{name="m.kb.io",operation="CREATE",rejected="false",type="admit",le="0.005"} 90
apiserver_admission_webhook_admission_duration_seconds_bucket{name="m.kb.io",operation="CREATE",rejected="false",type="admit",le="0.025"} 99
apiserver_admission_webhook_admission_duration_seconds_bucket{name="m.kb.io",operation="CREATE",rejected="false",type="admit",le="0.1"} 100
apiserver_admission_webhook_admission_duration_seconds_bucket{name="m.kb.io",operation="CREATE",rejected="false",type="admit",le="+Inf"} 100
apiserver_admission_webhook_admission_duration_seconds_count{name="m.kb.io",operation="CREATE",rejected="false",type="admit"} 100
# TYPE rest_client_requests_total counter
rest_client_requests_total{code="200",host="127.0.0.1:6443",method="GET"} 7
rest_client_requests_total{code="201",host="127.0.0.1:6443",method="PATCH"} 3
rest_client_requests_total{code="409",host="127.0.0.1:6443",method="PATCH"} 1
odd_label{v="a\"b,c}"} 1
# TYPE go_goroutines gauge
go_goroutines 42
`

func TestParseMetrics(t *testing.T) {
	m, err := parseMetrics(scrapeText)
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Sum("go_goroutines", nil); got != 42 {
		t.Errorf("go_goroutines = %v, want 42", got)
	}
	byMethod := m.clientRequestsByMethod()
	if byMethod["PATCH"] != 4 || byMethod["GET"] != 7 {
		t.Errorf("by method = %v, want PATCH 4 GET 7", byMethod)
	}
	if got := m.Sum("rest_client_requests_total", map[string]string{"method": "PATCH", "code": "409"}); got != 1 {
		t.Errorf("PATCH 409 = %v, want 1", got)
	}
	if got := m.labelValues("apiserver_admission_webhook_admission_duration_seconds", "name"); !slices.Equal(got, []string{"m.kb.io"}) {
		t.Errorf("webhook names = %v", got)
	}
	if got := m.Sum("odd_label", map[string]string{"v": `a"b,c}`}); got != 1 {
		t.Errorf("escaped label value not parsed: %v", m)
	}
	h := m.histogram("apiserver_admission_webhook_admission_duration_seconds", map[string]string{"operation": "CREATE"})
	if len(h) != 4 || total(h) != 100 {
		t.Fatalf("histogram = %v", h)
	}
	p50, b50 := quantile(0.5, h)
	if math.Abs(p50-0.005*50/90) > 1e-9 || b50 != 0.005 {
		t.Errorf("p50 = %v in bucket %v, want %v in 0.005", p50, b50, 0.005*50/90)
	}
	p99, b99 := quantile(0.99, h)
	if math.Abs(p99-0.025) > 1e-9 || b99 != 0.025 {
		t.Errorf("p99 = %v in bucket %v, want 0.025", p99, b99)
	}
	if f := fractionAtMost(0.005, h); f != 0.9 {
		t.Errorf("fraction <= 5ms = %v, want 0.9", f)
	}
	if f := fractionAtMost(0.01, h); f != 0.9 {
		t.Errorf("fraction <= 10ms = %v, want 0.9 (no bucket bound at 10ms)", f)
	}
}

func TestQuantileEdges(t *testing.T) {
	if p, _ := quantile(0.5, nil); !math.IsNaN(p) {
		t.Errorf("quantile of nothing = %v, want NaN", p)
	}
	inf := []bucket{{0.005, 0}, {0.025, 0}, {math.Inf(1), 10}}
	if p, b := quantile(0.99, inf); p != 0.025 || !math.IsInf(b, 1) {
		t.Errorf("quantile in +Inf = %v (bucket %v), want 0.025 (+Inf)", p, b)
	}
	delta := histogramDelta([]bucket{{0.005, 5}, {math.Inf(1), 6}}, []bucket{{0.005, 15}, {math.Inf(1), 16}})
	if total(delta) != 10 || delta[0].count != 10 {
		t.Errorf("delta = %v", delta)
	}
}

func TestSampleQuantiles(t *testing.T) {
	var v []float64
	for i := 1; i <= 100; i++ {
		v = append(v, float64(i))
	}
	q := sampleQuantiles(v)
	if q.P50 != 50 || q.P90 != 90 || q.P99 != 99 || q.Max != 100 {
		t.Errorf("quantiles = %+v", q)
	}
	if (sampleQuantiles(nil) != quantiles{}) {
		t.Error("quantiles of nothing should be zero")
	}
}
