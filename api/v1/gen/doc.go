// Package gen builds the objects the tests create, with functional options
// in the manner of cert-manager's test/unit/gen:
//
//	mc := gen.Memcached("ns", "cache", gen.WithSize(3))
//
// Every suite, unit tests included, makes its Memcached objects here, so a new
// spec field gets one option that all of them can use.
package gen
