package monitoring_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/example-inc/memcached-operator/controllers/monitoring"
)

// TestPodMonitorPassesUserWorkloadMonitoring: OpenShift's user-workload
// monitoring refuses a monitor that reads files of the Prometheus pod
// (a token or TLS file) or skips TLS verification, and namespace
// selectors reaching other namespaces.
func TestPodMonitorPassesUserWorkloadMonitoring(t *testing.T) {
	data, err := json.Marshal(monitoring.PodMonitorSpec("cache", map[string]string{"app.kubernetes.io/instance": "cache"}))
	if err != nil {
		t.Fatal(err)
	}
	for _, refused := range []string{"bearerTokenFile", "caFile", "certFile", "keyFile", "insecureSkipVerify", `"any":true`, "matchNames"} {
		if strings.Contains(string(data), refused) {
			t.Errorf("the PodMonitor has %s: %s", refused, data)
		}
	}
	if !strings.Contains(string(data), `"port":"metrics"`) || !strings.Contains(string(data), `"targetLabel":"memcached","replacement":"cache","action":"replace"`) {
		t.Errorf("the PodMonitor does not scrape port metrics labelled memcached=cache: %s", data)
	}
}
