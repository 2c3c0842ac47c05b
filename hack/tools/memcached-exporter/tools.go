//go:build tools

// Package tools pins prometheus/memcached_exporter, the sidecar of memcached
// pods with monitoring on, for the image the local cluster's real node runs
// (hack/local-cluster/images.MemcachedExporter builds its main package from this
// module).
package tools

import _ "github.com/prometheus/memcached_exporter/cmd/memcached_exporter"
