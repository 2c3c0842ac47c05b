//go:build tools

// Package tools pins etcd for the local cluster; its server module is itself
// the etcd main package.
package tools

import _ "go.etcd.io/etcd/server/v3"
