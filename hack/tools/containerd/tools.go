//go:build tools

// Package tools pins containerd for the local cluster's real node: `make
// node` builds containerd, its runc shim and ctr (to import the test images)
// from this module. kubelet 1.37 refuses containerd 1.x, so Debian's
// package will not do.
package tools

import (
	_ "github.com/containerd/containerd/v2/cmd/containerd"
	_ "github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2"
	_ "github.com/containerd/containerd/v2/cmd/ctr"
)
