package monitoring

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/example-inc/memcached-operator/hack/repo"
)

// dashboardFile is the Grafana dashboard of one Memcached.
var dashboardFile = filepath.Join(repo.Root(), "docs", "monitoring", "dashboard.json")

// exporterScrape is one real scrape of the exporter sidecar
// (prometheus/memcached_exporter v0.16.0 reading Debian's memcached 1.6.18): the
// series the dashboard may use, and nothing else.
var exporterScrape = filepath.Join("testdata", "exporter_metrics.txt")

// dashboardVars are what Grafana puts for the dashboard's variables: the
// Memcached shop/cache, every pod of it.
var dashboardVars = strings.NewReplacer(
	"$namespace", "shop",
	"$memcached", "cache",
	"$pod", ".*",
	"$__rate_interval", "2m",
)

type dashboard struct {
	Templating struct {
		List []struct {
			Name  string          `json:"name"`
			Type  string          `json:"type"`
			Query json.RawMessage `json:"query"`
		} `json:"list"`
	} `json:"templating"`
	Panels []dashboardPanel `json:"panels"`
}

type dashboardPanel struct {
	Title   string `json:"title"`
	Targets []struct {
		Expr         string `json:"expr"`
		LegendFormat string `json:"legendFormat"`
	} `json:"targets"`
	// Panels are a row's panels.
	Panels []dashboardPanel `json:"panels"`
}

// dashboardQuery is one panel query with the variables filled in.
type dashboardQuery struct {
	panel, expr string
	// perPod is whether the query draws one line per pod (its legend names
	// the pod) rather than one for the Memcached.
	perPod bool
}

// TestDashboardQueriesDrawEveryPod evaluates every panel query with
// promtool (which fails on one that does not parse) over the series of a real exporter scrape, for the two pods of
// shop/cache and a pod of another Memcached: a query for each pod must draw
// exactly two lines, one over the Memcached exactly one. A query of a series
// the exporter does not expose, or with a label it does not carry, draws
// none; one that forgets to filter by Memcached draws three.
func TestDashboardQueriesDrawEveryPod(t *testing.T) {
	metrics, err := os.ReadFile(exporterScrape)
	if err != nil {
		t.Fatal(err)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(metrics))
	if err != nil {
		t.Fatalf("%s: %v", exporterScrape, err)
	}
	targets := []map[string]string{
		{"job": "shop/cache", "instance": "10.88.0.11:9150", "namespace": "shop", "pod": "cache-a", "container": "exporter", "memcached": "cache"},
		{"job": "shop/cache", "instance": "10.88.0.12:9150", "namespace": "shop", "pod": "cache-b", "container": "exporter", "memcached": "cache"},
		{"job": "shop/other", "instance": "10.88.0.21:9150", "namespace": "shop", "pod": "other-a", "container": "exporter", "memcached": "other"},
	}
	var series []map[string]string
	for _, name := range slices.Sorted(maps.Keys(families)) {
		f := families[name]
		for _, m := range f.GetMetric() {
			for _, target := range targets {
				series = append(series, map[string]string{
					"series": seriesName(name, m, target),
					"values": seriesValues(f.GetType(), m.GetCounter().GetValue()+m.GetGauge().GetValue()+m.GetUntyped().GetValue()),
				})
			}
		}
	}
	var cases []map[string]any
	for _, q := range dashboardQueries(t) {
		want := 1
		if q.perPod {
			want = 2
		}
		cases = append(cases, map[string]any{
			"expr":        "count(" + q.expr + ")",
			"eval_time":   "30m",
			"exp_samples": []any{map[string]any{"labels": "{}", "value": want}},
		})
	}
	dir := t.TempDir()
	file := writeYAML(t, dir, "dashboard_test.yaml", map[string]any{
		"evaluation_interval": "1m",
		"tests": []any{map[string]any{
			"name":             "the dashboard's queries over the exporter's series",
			"interval":         "1m",
			"input_series":     series,
			"promql_expr_test": cases,
		}},
	})
	promtool(t, dir, "test", "rules", file)

	// The variables list namespaces, Memcached and pods from the exporter's
	// memcached_up, by labels its series carry.
	labelValues := regexp.MustCompile(`^label_values\(([a-z_]+)\{[^}]*\}, ([a-z_]+)\)$`)
	for _, v := range dashboardVariables(t) {
		m := labelValues.FindStringSubmatch(v)
		if m == nil {
			t.Errorf("variable query %q is not label_values(metric{...}, label)", v)
			continue
		}
		if _, ok := families[m[1]]; !ok {
			t.Errorf("variable query %q: the exporter has no %s", v, m[1])
		}
		if _, ok := targets[0][m[2]]; !ok {
			t.Errorf("variable query %q: the scraped series carry no label %s", v, m[2])
		}
	}
}

// dashboardQueries are every panel query of the dashboard, variables filled.
func dashboardQueries(t *testing.T) []dashboardQuery {
	t.Helper()
	d := readDashboard(t)
	var queries []dashboardQuery
	var walk func([]dashboardPanel)
	walk = func(panels []dashboardPanel) {
		for _, p := range panels {
			for _, target := range p.Targets {
				expr := dashboardVars.Replace(target.Expr)
				if strings.Contains(expr, "$") {
					t.Errorf("panel %q: a variable the test does not know in %s", p.Title, target.Expr)
				}
				queries = append(queries, dashboardQuery{panel: p.Title, expr: expr, perPod: strings.Contains(target.LegendFormat, "{{pod}}")})
			}
			walk(p.Panels)
		}
	}
	walk(d.Panels)
	if len(queries) == 0 {
		t.Fatalf("%s: no panel queries", dashboardFile)
	}
	return queries
}

// dashboardVariables are the queries of the dashboard's query variables.
func dashboardVariables(t *testing.T) []string {
	t.Helper()
	var queries []string
	for _, v := range readDashboard(t).Templating.List {
		if v.Type != "query" {
			continue
		}
		var q struct {
			Query string `json:"query"`
		}
		if err := json.Unmarshal(v.Query, &q); err != nil {
			t.Fatalf("variable %s: %v", v.Name, err)
		}
		queries = append(queries, q.Query)
	}
	return queries
}

func readDashboard(t *testing.T) dashboard {
	t.Helper()
	data, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	return d
}

// seriesName is a scraped series in promtool's series notation, with the
// labels its scrape target adds.
func seriesName(name string, m *dto.Metric, target map[string]string) string {
	labels := map[string]string{}
	for _, l := range m.GetLabel() {
		labels[l.GetName()] = l.GetValue()
	}
	for k, v := range target {
		labels[k] = v
	}
	var pairs []string
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		pairs = append(pairs, fmt.Sprintf("%s=%q", k, labels[k]))
	}
	return name + "{" + strings.Join(pairs, ",") + "}"
}

// seriesValues is 40 minutes of samples: a counter grows by one a minute
// from its scraped value, so that rates are not zero; anything else keeps
// its value.
func seriesValues(typ dto.MetricType, v float64) string {
	if typ == dto.MetricType_COUNTER {
		return fmt.Sprintf("%g+1x40", v)
	}
	return fmt.Sprintf("%gx40", v)
}
