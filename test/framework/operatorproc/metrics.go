package operatorproc

import (
	"context"
	"strings"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// MetricSum adds up the counter, gauge or untyped series of the metric name,
// in the Prometheus text format, that carry every one of labels.
func MetricSum(text, name string, labels map[string]string) (float64, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		return 0, err
	}
	var sum float64
	for _, m := range families[name].GetMetric() {
		found := 0
		for _, l := range m.GetLabel() {
			if v, ok := labels[l.GetName()]; ok && v == l.GetValue() {
				found++
			}
		}
		// The getters return 0 for the kinds a series is not.
		if found == len(labels) {
			sum += m.GetCounter().GetValue() + m.GetGauge().GetValue() + m.GetUntyped().GetValue()
		}
	}
	return sum, nil
}

// Reconciles is controller_runtime_reconcile_total of the Memcached
// controller over every result, from plain-HTTP metrics; 0 while the
// controller has not started (a standby replica never starts it).
func (o *Operator) Reconciles(ctx context.Context) (float64, error) {
	text, err := o.Metrics(ctx)
	if err != nil {
		return 0, err
	}
	return MetricSum(text, "controller_runtime_reconcile_total", map[string]string{"controller": "memcached"})
}
