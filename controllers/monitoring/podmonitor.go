package monitoring

import (
	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// The exporter container of a monitored Memcached's pods.
const (
	// ExporterContainer is its name.
	ExporterContainer = "exporter"
	// PortName names its port, which the PodMonitor scrapes.
	PortName = "metrics"
	// Port is prometheus/memcached_exporter's own default port.
	Port = 9150
	// MemcachedLabel is the label that carries the Memcached's name on
	// every series of its pods.
	MemcachedLabel = "memcached"
	// scrapeInterval is how often a pod is scraped. Rates in the rules
	// span at least four scrapes.
	scrapeInterval = "30s"
)

// PodMonitorSpec scrapes the exporter of the pods that selector selects,
// the pods of the Memcached name. It names no file, token or TLS setting:
// OpenShift's user-workload monitoring refuses those, and the exporter
// serves plain HTTP inside the cluster network.
func PodMonitorSpec(name string, selector map[string]string) monitoringv1.PodMonitorSpec {
	return monitoringv1.PodMonitorSpec{
		Selector: metav1.LabelSelector{MatchLabels: selector},
		PodMetricsEndpoints: []monitoringv1.PodMetricsEndpoint{{
			Port:     ptr.To(PortName),
			Interval: scrapeInterval,
			RelabelConfigs: []monitoringv1.RelabelConfig{{
				Action:      "replace",
				TargetLabel: MemcachedLabel,
				Replacement: ptr.To(name),
			}},
		}},
	}
}
