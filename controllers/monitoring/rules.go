package monitoring

import monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"

// Rules is a placeholder until the rules helper lands (NOT FOR COMMIT).
func Rules(namespace, name string) monitoringv1.PrometheusRuleSpec {
	return monitoringv1.PrometheusRuleSpec{Groups: []monitoringv1.RuleGroup{{Name: "memcached-" + name}}}
}
