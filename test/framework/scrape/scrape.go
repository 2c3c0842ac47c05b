package scrape

import (
	"iter"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Metrics is one scrape, by family name.
type Metrics map[string]*dto.MetricFamily

// Parse reads text in the Prometheus text format.
func Parse(text string) (Metrics, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	return p.TextToMetricFamilies(strings.NewReader(text))
}

// Series yields the series of family name that carry every label in want.
func (m Metrics) Series(name string, want map[string]string) iter.Seq[*dto.Metric] {
	return func(yield func(*dto.Metric) bool) {
		for _, s := range m[name].GetMetric() {
			if matches(s, want) && !yield(s) {
				return
			}
		}
	}
}

func matches(s *dto.Metric, want map[string]string) bool {
	found := 0
	for _, l := range s.GetLabel() {
		if v, ok := want[l.GetName()]; ok && v == l.GetValue() {
			found++
		}
	}
	return found == len(want)
}

// Value is a counter's, gauge's or untyped series' value; the getters
// return 0 for the kinds a series is not, so the sum is the one it is.
func Value(s *dto.Metric) float64 {
	return s.GetCounter().GetValue() + s.GetGauge().GetValue() + s.GetUntyped().GetValue()
}

// Sum adds up every series of name that carries the labels in want.
func (m Metrics) Sum(name string, want map[string]string) float64 {
	total := 0.0
	for s := range m.Series(name, want) {
		total += Value(s)
	}
	return total
}
