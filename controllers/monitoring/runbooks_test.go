package monitoring

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/example-inc/memcached-operator/hack/repo"
)

// runbookDir holds one runbook per alert, <alert>.md.
var runbookDir = filepath.Join(repo.Root(), "docs", "monitoring", "runbooks")

// runbookSections are the headings every runbook has, in this order: what
// the alert means, how to confirm it with kubectl, and what fixes it.
var runbookSections = []string{"## Meaning", "## Diagnosis", "## Mitigation"}

// TestEveryAlertHasRunbookAndTest checks that every alert, a Memcached's or
// the operator's, has a runbook with its sections and is expected to fire by
// some promtool test in testdata and listed in docs/monitoring.md, and that
// every runbook is an alert's.
func TestEveryAlertHasRunbookAndTest(t *testing.T) {
	tested := firedInTests(t)
	alerts := map[string]bool{}
	for _, a := range allAlerts(t) {
		alerts[a.Alert] = true
		data, err := os.ReadFile(filepath.Join(runbookDir, a.Alert+".md"))
		if err != nil {
			t.Errorf("alert %s has no runbook: %v", a.Alert, err)
		} else {
			checkRunbook(t, a.Alert, string(data))
		}
		if !tested[a.Alert] {
			t.Errorf("alert %s fires in no promtool test (exp_alerts) in testdata", a.Alert)
		}
	}
	// docs/monitoring.md lists them all, linking each runbook.
	doc, err := os.ReadFile(filepath.Join(repo.Root(), "docs", "monitoring.md"))
	if err != nil {
		t.Fatal(err)
	}
	for a := range alerts {
		if link := "[" + a + "](monitoring/runbooks/" + a + ".md)"; !strings.Contains(string(doc), link) {
			t.Errorf("docs/monitoring.md does not list alert %s as %s", a, link)
		}
	}
	files, err := filepath.Glob(filepath.Join(runbookDir, "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if name := strings.TrimSuffix(filepath.Base(f), ".md"); !alerts[name] {
			t.Errorf("runbook %s belongs to no alert", f)
		}
	}
}

// checkRunbook checks that a runbook is titled with its alert and has the
// sections, in order, and that its diagnosis uses kubectl.
func checkRunbook(t *testing.T, alert, text string) {
	t.Helper()
	if !strings.HasPrefix(text, "# "+alert+"\n") {
		t.Errorf("runbook of %s does not start with the title %q", alert, "# "+alert)
	}
	at := 0
	for _, s := range runbookSections {
		i := strings.Index(text[at:], "\n"+s+"\n")
		if i < 0 {
			t.Errorf("runbook of %s: no %q after the previous section", alert, s)
			return
		}
		at += i + 1
	}
	diagnosis, _, _ := strings.Cut(text[strings.Index(text, "\n## Diagnosis\n"):], "\n## Mitigation\n")
	if !strings.Contains(diagnosis, "kubectl ") {
		t.Errorf("runbook of %s: its diagnosis shows no kubectl command", alert)
	}
}

// promtoolTests is the part of a promtool test file that says which alerts
// the tests expect to fire.
type promtoolTests struct {
	Tests []struct {
		AlertRuleTest []struct {
			Alertname string           `json:"alertname"`
			ExpAlerts []map[string]any `json:"exp_alerts"`
		} `json:"alert_rule_test"`
	} `json:"tests"`
}

// firedInTests are the alerts that some promtool test in testdata expects
// to fire (a test with no exp_alerts only shows an alert silent).
func firedInTests(t *testing.T) map[string]bool {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "*_rules_test.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no promtool tests in testdata: %v", err)
	}
	fired := map[string]bool{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var pt promtoolTests
		if err := yaml.Unmarshal(data, &pt); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, tg := range pt.Tests {
			for _, c := range tg.AlertRuleTest {
				if len(c.ExpAlerts) > 0 {
					fired[c.Alertname] = true
				}
			}
		}
	}
	return fired
}
