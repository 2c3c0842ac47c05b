//go:build tools

// Package tools pins the Kubernetes commands that tests and the local cluster
// run; `make control-plane` builds the control plane and kwok from this
// module, and `make node` the real node's kubelet and kube-proxy. kwok is
// built against the control plane's Kubernetes libraries rather than its own
// release's, so that it compiles only the few packages they do not share.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-proxy"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
	_ "k8s.io/kubernetes/cmd/kubelet"
	_ "sigs.k8s.io/kwok/cmd/kwok"
)
