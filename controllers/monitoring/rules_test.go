package monitoring

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/yaml"

	"github.com/example-inc/memcached-operator/hack/repo"
)

// operatorRulesFile holds the operator's own alerts, a PrometheusRule that
// config/prometheus deploys beside the operator.
var operatorRulesFile = filepath.Join(repo.Root(), "config", "prometheus", "rules.yaml")

// TestMemcachedRules runs testdata/memcached_rules_test.yaml, the unit tests
// of every alert of Rules("shop", "cache"), with promtool, after
// `promtool check rules` (syntax, and promtool's lint of duplicate rules).
func TestMemcachedRules(t *testing.T) {
	dir := t.TempDir()
	rules := writeYAML(t, dir, "memcached.rules.yaml", Rules("shop", "cache"))
	tests := copyFile(t, filepath.Join("testdata", "memcached_rules_test.yaml"), dir)
	promtool(t, dir, "check", "rules", "--lint-fatal", rules)
	promtool(t, dir, "test", "rules", tests)
}

// TestOperatorRules does the same for the spec of config/prometheus/rules.yaml
// with testdata/operator_rules_test.yaml.
func TestOperatorRules(t *testing.T) {
	dir := t.TempDir()
	rules := writeYAML(t, dir, "operator.rules.yaml", operatorRules(t).Spec)
	tests := copyFile(t, filepath.Join("testdata", "operator_rules_test.yaml"), dir)
	promtool(t, dir, "check", "rules", "--lint-fatal", rules)
	promtool(t, dir, "test", "rules", tests)
}

// TestAlertsCarryWhatTheirReaderNeeds checks what the Operator SDK's
// observability practices ask of every alert, in both sources: a severity
// of critical, warning or info; a summary and a description; a runbook_url
// that names the alert's runbook; descriptions that say which namespace
// (and for the Memcached's alerts, which Memcached) is concerned.
func TestAlertsCarryWhatTheirReaderNeeds(t *testing.T) {
	for _, a := range allAlerts(t) {
		t.Run(a.Alert, func(t *testing.T) {
			switch a.Labels["severity"] {
			case "critical", "warning", "info":
			default:
				t.Errorf("severity %q, want critical, warning or info", a.Labels["severity"])
			}
			for _, k := range []string{"summary", "description"} {
				if a.Annotations[k] == "" {
					t.Errorf("no %s annotation", k)
				}
			}
			if want := runbookBaseURL + a.Alert + ".md"; a.Annotations["runbook_url"] != want {
				t.Errorf("runbook_url %q, want %q", a.Annotations["runbook_url"], want)
			}
			if !strings.Contains(a.Annotations["description"], "namespace") {
				t.Errorf("description %q does not name the namespace", a.Annotations["description"])
			}
		})
	}
}

// TestRulesReadOnlyTheirMemcached checks that every series a Memcached's
// rules select is filtered to that Memcached, so the rules of two Memcached
// never see each other's series. The promtool tests show it for the series
// they hold; this covers every selector, whatever the tests hold.
func TestRulesReadOnlyTheirMemcached(t *testing.T) {
	want := `{namespace="shop",memcached="cache"`
	for _, g := range Rules("shop", "cache").Groups {
		for _, r := range g.Rules {
			e := r.Expr.String()
			if n := strings.Count(e, "{"); n == 0 || n != strings.Count(e, want) {
				t.Errorf("%s: %d selectors, %d of them for shop/cache: %s", r.Alert, n, strings.Count(e, want), e)
			}
		}
	}
}

// TestReconcileErrorWindowOutlastsRetryDelay ties
// MemcachedOperatorReconcileErrors to the retry delays of controller-runtime's
// default rate limiter, which the operator's controller uses: the window of
// its increase() must outlast the longest delay, or an object that keeps
// failing would leave windows without a failure and the alert would never
// fire; its `for` must outlast the window, or one failure would fire it.
func TestReconcileErrorWindowOutlastsRetryDelay(t *testing.T) {
	limiter := workqueue.DefaultTypedControllerRateLimiter[string]()
	var longest time.Duration
	for range 100 {
		longest = max(longest, limiter.When("failing"))
	}
	for _, g := range operatorRules(t).Spec.Groups {
		for _, r := range g.Rules {
			if r.Alert != "MemcachedOperatorReconcileErrors" {
				continue
			}
			m := regexp.MustCompile(`\[(\w+)\]`).FindStringSubmatch(r.Expr.String())
			if m == nil {
				t.Fatalf("no range in %s", r.Expr.String())
			}
			window, err := time.ParseDuration(m[1])
			if err != nil {
				t.Fatal(err)
			}
			forDuration, err := time.ParseDuration(string(*r.For))
			if err != nil {
				t.Fatal(err)
			}
			if window <= longest {
				t.Errorf("window %v does not outlast the longest retry delay %v", window, longest)
			}
			if forDuration <= window {
				t.Errorf("for %v does not outlast the window %v", forDuration, window)
			}
			return
		}
	}
	t.Fatal("no MemcachedOperatorReconcileErrors in " + operatorRulesFile)
}

// operatorRules reads config/prometheus/rules.yaml.
func operatorRules(t *testing.T) monitoringv1.PrometheusRule {
	t.Helper()
	data, err := os.ReadFile(operatorRulesFile)
	if err != nil {
		t.Fatal(err)
	}
	var pr monitoringv1.PrometheusRule
	if err := yaml.UnmarshalStrict(data, &pr); err != nil {
		t.Fatalf("%s: %v", operatorRulesFile, err)
	}
	return pr
}

// allAlerts are the alerting rules of both sources: a Memcached's and the
// operator's.
func allAlerts(t *testing.T) []monitoringv1.Rule {
	t.Helper()
	var alerts []monitoringv1.Rule
	for _, spec := range []monitoringv1.PrometheusRuleSpec{Rules("shop", "cache"), operatorRules(t).Spec} {
		for _, g := range spec.Groups {
			for _, r := range g.Rules {
				if r.Alert != "" {
					alerts = append(alerts, r)
				}
			}
		}
	}
	if len(alerts) == 0 {
		t.Fatal("no alerts")
	}
	return alerts
}
