// Package monitoring builds what Prometheus needs to watch a Memcached: the
// exporter's port and name, which the reconciler puts into every pod of a
// monitored Memcached, the PodMonitor that scrapes it and the alerting
// rules over the series it exports (prometheus/memcached_exporter's). It is
// pure: the reconciler (package controllers) applies what it builds where
// the Prometheus Operator's API (monitoring.coreos.com/v1) is served.
//
// Every series scraped through the PodMonitor carries the label
// memcached="<name>" beside Prometheus' namespace and pod, so that a rule or a
// dashboard selects one Memcached's pods by two labels, whatever its pods are
// called.
package monitoring
