//go:build tools

// Package tools pins the commands that tests and the local cluster run:
// `make control-plane` builds the control plane, etcd and kwok from this
// module, `make node` the real node's kubelet, kube-proxy and CoreDNS
// (./coredns), and `make opm olm preflight` the Operator Framework's
// tools and openshift-preflight. One module resolves them all onto the
// control plane's libraries, so that after the control plane each compiles
// only the packages it does not share; the project's go.mod requires the
// same versions of what it shares with them (hack/shared-modules.sh).
//
// Two requirements sit above what the tools ask for: preflight's
// github.com/openshift/api and client-go of May 2024 were generated for
// structured-merge-diff v4, which Kubernetes 1.34 replaced with v6; the
// November 2025 ones build against this Kubernetes.
package tools

import (
	_ "github.com/operator-framework/operator-lifecycle-manager/cmd/catalog"
	_ "github.com/operator-framework/operator-lifecycle-manager/cmd/olm"
	_ "github.com/operator-framework/operator-registry/cmd/opm"
	_ "github.com/prometheus/prometheus/cmd/promtool"
	_ "github.com/redhat-openshift-ecosystem/openshift-preflight/cmd/preflight"
	_ "go.etcd.io/etcd/server/v3"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-proxy"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
	_ "k8s.io/kubernetes/cmd/kubelet"
	_ "sigs.k8s.io/controller-tools/cmd/controller-gen"
	_ "sigs.k8s.io/kwok/cmd/kwok"
)
