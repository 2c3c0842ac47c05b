// Package scrape reads a /metrics endpoint's Prometheus text, as the
// operator, kube-apiserver and client-go serve it, with Prometheus's own
// parser: a sum over the series that carry given labels, and the series
// themselves for what a caller reads beyond that (histograms, label
// values).
//
//	m, err := scrape.Parse(text)
//	reconciles := m.Sum("controller_runtime_reconcile_total", map[string]string{"controller": "memcached"})
package scrape
