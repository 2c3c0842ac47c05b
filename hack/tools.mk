# hack/tools.mk: the tools this project builds for itself, every one from the
# Go module proxy (no other download), pinned to an exact version and built
# only when missing. The main Makefile includes this file; its `help` target
# lists the `##` comments below.
#
# Tools installed with `go install` follow kubebuilder's go-install-tool
# pattern: bin/<tool>-<version> plus a symlink bin/<tool>, so that a version
# bump builds the new version. Tools that cannot be `go install`ed are built
# from wrapper modules under hack/tools/<tool> (go.mod and go.sum committed).

# Needs GNU make >= 4.3 (grouped targets, `&:`), for the one shared compile of
# the Kubernetes binaries and of OLM's two binaries.
ifeq ($(filter grouped-target,$(.FEATURES)),)
$(error hack/tools.mk needs GNU make >= 4.3 (grouped targets); this is $(MAKE_VERSION))
endif

# Keep the including Makefile's default goal: nothing here is meant to be it.
TOOLS_MK_DEFAULT_GOAL := $(.DEFAULT_GOAL)
# Wrapper modules sit next to this file, wherever make is run from.
TOOLS_MK_DIR := $(patsubst %/,%,$(dir $(abspath $(lastword $(MAKEFILE_LIST)))))
TOOLS_MODULES_DIR := $(TOOLS_MK_DIR)/tools

GO ?= go
# The local Go toolchain only: a go.mod line must never make go download one.
TOOLS_GOENV ?= GOTOOLCHAIN=local
TOOLS_GO = $(TOOLS_GOENV) $(GO)

##@ Dependencies

## Location to install dependencies to
LOCALBIN ?= $(shell pwd)/bin
$(LOCALBIN):
	mkdir -p "$(LOCALBIN)"

## Tool Binaries
KUBECTL ?= $(LOCALBIN)/kubectl
KUSTOMIZE ?= $(LOCALBIN)/kustomize
CONTROLLER_GEN ?= $(LOCALBIN)/controller-gen
GOLANGCI_LINT ?= $(LOCALBIN)/golangci-lint
GINKGO ?= $(LOCALBIN)/ginkgo
OPERATOR_SDK ?= $(LOCALBIN)/operator-sdk
OPM ?= $(LOCALBIN)/opm
PROMTOOL ?= $(LOCALBIN)/promtool
CRANE ?= $(LOCALBIN)/crane
PREFLIGHT ?= $(LOCALBIN)/preflight

## Tool Versions
KUSTOMIZE_VERSION ?= v5.8.2
CONTROLLER_TOOLS_VERSION ?= v0.23.0
GOLANGCI_LINT_VERSION ?= v2.15.0
GINKGO_VERSION ?= v2.34.0
# github.com/prometheus/prometheus's module version for Prometheus 3.16.0.
PROMTOOL_VERSION ?= v0.316.0
# go-containerregistry's version in go.mod: the tests push with the same library.
CRANE_VERSION ?= v0.22.1
# The main Makefile sets OPERATOR_SDK_VERSION too; this is only a fallback.
# The wrapper modules pin the same versions: a bump of OPERATOR_SDK_VERSION,
# OPM_VERSION, OLM_VERSION, PREFLIGHT_VERSION, K8S_VERSION, ETCD_VERSION,
# CONTAINERD_VERSION or COREDNS_VERSION needs the matching wrapper module's
# go.mod too (hack/tools/operator-sdk, hack/tools/containerd, and
# hack/tools/kubernetes for all the others), or the build stops with a
# message. The project's go.mod, hack/tools/kubernetes and
# hack/tools/containerd build the modules they share at one version (make
# verify checks it: hack/shared-modules.sh).
OPERATOR_SDK_VERSION ?= v1.31.0
OPM_VERSION ?= v1.74.0
OLM_VERSION ?= v0.38.0
# openshift-preflight: v1.14.1 is the newest version the module proxy serves
# (v1.14.2, v1.15.x, v1.16.0 and v1.17.0 are refused).
PREFLIGHT_VERSION ?= v1.14.1
# The Kubernetes version has one source: hack/tools/kubernetes/go.mod's
# requirement of k8s.io/kubernetes (the Go tests read it there too).
ifndef K8S_VERSION
K8S_VERSION := $(shell sed -n 's/^\(require\)\{0,1\}[[:space:]]*k8s\.io\/kubernetes v\([0-9][0-9.]*\).*/\2/p' "$(TOOLS_MODULES_DIR)/kubernetes/go.mod")
endif
ifeq ($(K8S_VERSION),)
$(error cannot read the k8s.io/kubernetes version from $(TOOLS_MODULES_DIR)/kubernetes/go.mod)
endif
ETCD_VERSION ?= v3.7.3
KWOK_VERSION ?= v0.8.0

## Local control plane (envtest's KUBEBUILDER_ASSETS, kwok, OLM's cluster)
CONTROL_PLANE_DIR ?= $(LOCALBIN)/k8s/$(K8S_VERSION)
export CONTROL_PLANE_DIR
KUBE_APISERVER ?= $(CONTROL_PLANE_DIR)/kube-apiserver
KUBE_CONTROLLER_MANAGER ?= $(CONTROL_PLANE_DIR)/kube-controller-manager
KUBE_SCHEDULER ?= $(CONTROL_PLANE_DIR)/kube-scheduler
CONTROL_PLANE_KUBECTL ?= $(CONTROL_PLANE_DIR)/kubectl
ETCD ?= $(CONTROL_PLANE_DIR)/etcd
KWOK ?= $(CONTROL_PLANE_DIR)/kwok
KWOK_STAGES ?= $(CONTROL_PLANE_DIR)/kwok-stages.yaml

## The real node (make test-e2e, LOCAL_CLUSTER_NODE=real): kubelet,
## kube-proxy and the cluster's DNS server from hack/tools/kubernetes,
## containerd with its runc shim and ctr from hack/tools/containerd, next to
## the control plane; the rest from Debian (make node-packages).
CONTAINERD_VERSION ?= v2.4.2
COREDNS_VERSION ?= v1.15.0
KUBELET ?= $(CONTROL_PLANE_DIR)/kubelet
KUBE_PROXY ?= $(CONTROL_PLANE_DIR)/kube-proxy
CONTAINERD ?= $(CONTROL_PLANE_DIR)/containerd
CONTAINERD_SHIM ?= $(CONTROL_PLANE_DIR)/containerd-shim-runc-v2
CTR ?= $(CONTROL_PLANE_DIR)/ctr
COREDNS ?= $(CONTROL_PLANE_DIR)/coredns
# NODE_PACKAGES (the Makefile) lists the Debian packages it needs.

## OLM (v0) binaries, run out of cluster
OLM_BIN_DIR ?= $(LOCALBIN)/olm/$(OLM_VERSION)
OLM ?= $(OLM_BIN_DIR)/olm
OLM_CATALOG ?= $(OLM_BIN_DIR)/catalog
# OLM's CRDs (install them with `kubectl create`: the CSV CRD is too large for
# client-side apply). Evaluated only where used; downloads the module if needed.
OLM_CRDS_DIR = $(call go-mod-dir,$(TOOLS_MODULES_DIR)/kubernetes,github.com/operator-framework/operator-lifecycle-manager)/deploy/chart/crds
# The OpenShift cluster Proxy CRD (config.openshift.io/v1), from the
# github.com/openshift/api version the olm binary is built with
# (hack/tools/kubernetes resolves it): olm reads the cluster proxy from a Proxy
# named `cluster`. Evaluated only where used; downloads the module if needed.
OPENSHIFT_PROXY_CRD = $(call go-mod-dir,$(TOOLS_MODULES_DIR)/kubernetes,github.com/openshift/api)/config/v1/zz_generated.crd-manifests/0000_03_config-operator_01_proxies.crd.yaml

# The two are computed by $(shell), whose failure make ignores: this target
# checks that they exist, so a failed download stops test-e2e here.
.PHONY: olm-manifests
olm-manifests: ## Download OLM's CRDs and the OpenShift Proxy CRD into the module cache, or fail.
	@test -f "$(OLM_CRDS_DIR)/0000_50_olm_00-subscriptions.crd.yaml" || { echo "OLM's CRDs not found at '$(OLM_CRDS_DIR)': go mod download in hack/tools/kubernetes failed" >&2; exit 1; }
	@test -f "$(OPENSHIFT_PROXY_CRD)" || { echo "the OpenShift Proxy CRD not found at '$(OPENSHIFT_PROXY_CRD)': go mod download in hack/tools/kubernetes failed" >&2; exit 1; }

## The Prometheus Operator's CRDs (monitoring.coreos.com/v1: ServiceMonitor,
## PodMonitor, PrometheusRule and the rest), generated by controller-gen from
## the API module at the version the project's go.mod requires (one source for
## the types the code builds and the CRDs the tests install). Tests install
## them from PROMETHEUS_OPERATOR_CRDS with envtest (too large for kubectl's
## client-side apply).
PROMETHEUS_OPERATOR_API := github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring
ifndef PROMETHEUS_OPERATOR_VERSION
PROMETHEUS_OPERATOR_VERSION := $(shell sed -n 's/^\(require\)\{0,1\}[[:space:]]*github\.com\/prometheus-operator\/prometheus-operator\/pkg\/apis\/monitoring \(v[^[:space:]]*\).*/\2/p' "$(TOOLS_MK_DIR)/../go.mod")
endif
PROMETHEUS_OPERATOR_CRDS ?= $(LOCALBIN)/crds/prometheus-operator-$(PROMETHEUS_OPERATOR_VERSION)
export PROMETHEUS_OPERATOR_CRDS

# Written into a temporary directory and renamed, so that a concurrent make
# (bin/ may be shared) never sees half the files.
.PHONY: prometheus-operator-crds
prometheus-operator-crds: $(PROMETHEUS_OPERATOR_CRDS)/monitoring.coreos.com_servicemonitors.yaml ## Generate the Prometheus Operator's CRDs into PROMETHEUS_OPERATOR_CRDS (bin/crds/prometheus-operator-<version>) if missing.
$(PROMETHEUS_OPERATOR_CRDS)/monitoring.coreos.com_servicemonitors.yaml: | $(CONTROLLER_GEN)
	@set -e; [ -n "$(PROMETHEUS_OPERATOR_VERSION)" ] || { echo "go.mod does not require $(PROMETHEUS_OPERATOR_API)" >&2; exit 1; }; \
	echo "Generating the CRDs of $(PROMETHEUS_OPERATOR_API) $(PROMETHEUS_OPERATOR_VERSION) into $(PROMETHEUS_OPERATOR_CRDS)"; \
	mkdir -p "$(dir $(PROMETHEUS_OPERATOR_CRDS))"; \
	tmp="$$(mktemp -d "$(PROMETHEUS_OPERATOR_CRDS).tmp.XXXXXX")"; chmod 755 "$$tmp"; trap 'rm -rf "$$tmp"' EXIT; \
	cd "$(abspath $(TOOLS_MK_DIR)/..)" && "$(CONTROLLER_GEN)" crd paths=$(PROMETHEUS_OPERATOR_API)/v1 output:crd:dir="$$tmp"; \
	rm -rf "$(PROMETHEUS_OPERATOR_CRDS)"; mv -T "$$tmp" "$(PROMETHEUS_OPERATOR_CRDS)"

.PHONY: kustomize
kustomize: $(KUSTOMIZE) ## Build kustomize into bin/ from the module proxy if necessary.
$(KUSTOMIZE): .tools-check | $(LOCALBIN)
	$(call go-install-tool,$(KUSTOMIZE),sigs.k8s.io/kustomize/kustomize/v5,$(KUSTOMIZE_VERSION))

.PHONY: controller-gen
controller-gen: $(CONTROLLER_GEN) ## Build controller-gen into bin/ from hack/tools/kubernetes if necessary.
# From the Kubernetes wrapper module, with the control plane's libraries: it
# compiles only what they do not share. The version it writes into the CRDs
# is set, as the main module is the wrapper's.
$(CONTROLLER_GEN): .tools-check | $(LOCALBIN)
	$(call go-build-tool,$(CONTROLLER_GEN),kubernetes,sigs.k8s.io/controller-tools,$(CONTROLLER_TOOLS_VERSION),sigs.k8s.io/controller-tools/cmd/controller-gen,,,-s -w -X sigs.k8s.io/controller-tools/pkg/version.version=$(CONTROLLER_TOOLS_VERSION))

.PHONY: golangci-lint
golangci-lint: $(GOLANGCI_LINT) ## Build golangci-lint into bin/ from the module proxy if necessary.
$(GOLANGCI_LINT): .tools-check | $(LOCALBIN)
	$(call go-install-tool,$(GOLANGCI_LINT),github.com/golangci/golangci-lint/v2/cmd/golangci-lint,$(GOLANGCI_LINT_VERSION))

.PHONY: ginkgo
ginkgo: $(GINKGO) ## Build ginkgo into bin/ from the module proxy if necessary.
$(GINKGO): .tools-check | $(LOCALBIN)
	$(call go-install-tool,$(GINKGO),github.com/onsi/ginkgo/v2/ginkgo,$(GINKGO_VERSION))

# crane resolves the release bundle's images to digests (make bundle
# USE_IMAGE_DIGESTS=true).
.PHONY: crane
crane: $(CRANE) ## Build crane into bin/ from the module proxy if necessary.
$(CRANE): .tools-check | $(LOCALBIN)
	$(call go-install-tool,$(CRANE),github.com/google/go-containerregistry/cmd/crane,$(CRANE_VERSION),-trimpath -ldflags '-s -w')

# promtool checks and unit-tests the alerting rules (make test). Built without
# Prometheus's service discoveries (remove_all_sd), which promtool's rule
# commands never use: 250 fewer packages, the cloud SDKs among them. From the
# Kubernetes wrapper module, as controller-gen.
.PHONY: promtool
promtool: $(PROMTOOL) ## Build promtool into bin/ from hack/tools/kubernetes if necessary.
$(PROMTOOL): .tools-check | $(LOCALBIN)
	$(call go-build-tool,$(PROMTOOL),kubernetes,github.com/prometheus/prometheus,$(PROMTOOL_VERSION),github.com/prometheus/prometheus/cmd/promtool,,remove_all_sd,-s -w)

# operator-sdk cannot be `go install`ed (replace directives; the proxy lists no
# versions). hack/tools/operator-sdk is its own go.mod renamed, with x/tools
# raised to v0.34.0 (v0.9.1 does not compile with Go >= 1.24). Built without
# cgo, as hack/local-cluster/images builds the scorecard-test image from the same
# module: that build then finds every package compiled instead of compiling
# them again. Only operator-registry's sqlite3 wants cgo, and nothing this
# project runs (generate, bundle validate, scorecard) opens a database.
OPERATOR_SDK_MODULE := github.com/operator-framework/operator-sdk
OPERATOR_SDK_K8S_VERSION ?= v1.26.0
OPERATOR_SDK_LDFLAGS = -s -w \
	-X $(OPERATOR_SDK_MODULE)/internal/version.Version=$(OPERATOR_SDK_VERSION) \
	-X $(OPERATOR_SDK_MODULE)/internal/version.GitVersion=$(OPERATOR_SDK_VERSION) \
	-X $(OPERATOR_SDK_MODULE)/internal/version.GitCommit=$$commit \
	-X $(OPERATOR_SDK_MODULE)/internal/version.KubernetesVersion=$(OPERATOR_SDK_K8S_VERSION) \
	-X $(OPERATOR_SDK_MODULE)/internal/version.ImageVersion=$(OPERATOR_SDK_VERSION)

.PHONY: operator-sdk
operator-sdk: $(OPERATOR_SDK) ## Build operator-sdk locally if necessary (from hack/tools/operator-sdk).
$(OPERATOR_SDK): .tools-check | $(LOCALBIN)
	$(call go-build-tool,$(OPERATOR_SDK),operator-sdk,$(OPERATOR_SDK_MODULE),$(OPERATOR_SDK_VERSION),$(OPERATOR_SDK_MODULE)/cmd/operator-sdk,CGO_ENABLED=0,containers_image_openpgp,$(OPERATOR_SDK_LDFLAGS))

# opm, OLM's olm and catalog, and openshift-preflight come from the Kubernetes
# wrapper module too (hack/tools/kubernetes requires all three), with the
# control plane's libraries, flags and cgo: each then compiles only the
# packages the control plane does not have, where a module of its own compiled
# a whole Kubernetes of its release's versions. One `go build` for whichever
# of them are missing; each binary's path names its version, so a bump builds
# it again.
OPM_MODULE := github.com/operator-framework/operator-registry
OLM_MODULE := github.com/operator-framework/operator-lifecycle-manager
PREFLIGHT_MODULE := github.com/redhat-openshift-ecosystem/openshift-preflight
OPERATOR_FRAMEWORK_TOOLS := $(OPM)-$(OPM_VERSION)=$(OPM_MODULE)/cmd/opm \
	$(OLM)=$(OLM_MODULE)/cmd/olm $(OLM_CATALOG)=$(OLM_MODULE)/cmd/catalog \
	$(PREFLIGHT)-$(PREFLIGHT_VERSION)=$(PREFLIGHT_MODULE)/cmd/preflight
# json1: opm's sqlite; containers_image_openpgp: containers/image without gpgme.
# $$opm_commit, $$opm_date and $$preflight_commit are set by the recipe.
OPERATOR_FRAMEWORK_LDFLAGS = -s -w \
	-X $(OPM_MODULE)/cmd/opm/version.opmVersion=$(OPM_VERSION) \
	-X $(OPM_MODULE)/cmd/opm/version.gitCommit=$$opm_commit \
	-X $(OPM_MODULE)/cmd/opm/version.buildDate=$$opm_date \
	-X $(OLM_MODULE)/pkg/version.OLMVersion=$(OLM_VERSION) \
	-X $(PREFLIGHT_MODULE)/version.version=$(PREFLIGHT_VERSION) \
	-X $(PREFLIGHT_MODULE)/version.commit=$$preflight_commit

.PHONY: opm olm preflight
opm: $(OPM) ## Build opm locally if necessary (from hack/tools/kubernetes).
olm: $(OLM) $(OLM_CATALOG) ## Build OLM's olm and catalog locally if necessary (from hack/tools/kubernetes).
preflight: $(PREFLIGHT) ## Build openshift-preflight locally if necessary (from hack/tools/kubernetes).

$(OPM)-$(OPM_VERSION) $(OLM) $(OLM_CATALOG) $(PREFLIGHT)-$(PREFLIGHT_VERSION) &: | $(LOCALBIN)
	@$(call kubernetes-module-lock); \
	$(call check-wrapper-version,$(OPM_MODULE),$(OPM_VERSION)); \
	$(call check-wrapper-version,$(OLM_MODULE),$(OLM_VERSION)); \
	$(call check-wrapper-version,$(PREFLIGHT_MODULE),$(PREFLIGHT_VERSION)); \
	pkgs=; for pair in $(OPERATOR_FRAMEWORK_TOOLS); do [ -x "$${pair%%=*}" ] || pkgs="$$pkgs $${pair#*=}"; done; \
	[ -n "$$pkgs" ] || exit 0; \
	set -- $$($(TOOLS_GO) list -m -f '{{.Time.UTC.Format "2006-01-02T15:04:05Z"}} {{with .Origin}}{{.Hash}}{{end}}' $(OPM_MODULE)@$(OPM_VERSION)); \
	opm_date=$$1 opm_commit=$$2; \
	preflight_commit="$$($(TOOLS_GO) list -m -f '{{with .Origin}}{{.Hash}}{{end}}' $(PREFLIGHT_MODULE)@$(PREFLIGHT_VERSION))"; \
	out="$$(mktemp -d "$(abspath $(LOCALBIN))/.operator-framework.XXXXXX")"; trap 'rm -rf "$$out"' EXIT; \
	echo "Building$$pkgs from hack/tools/kubernetes"; \
	$(TOOLS_GO) build -mod=mod -trimpath -tags "json1 containers_image_openpgp" \
		-ldflags "$(OPERATOR_FRAMEWORK_LDFLAGS)" -o "$$out/" $$pkgs; \
	for pair in $(OPERATOR_FRAMEWORK_TOOLS); do \
		f="$$out/$${pair##*/}"; [ ! -f "$$f" ] || { mkdir -p "$$(dirname "$${pair%%=*}")"; mv "$$f" "$${pair%%=*}"; }; \
	done

# bin/opm and bin/preflight link to the versioned binaries.
$(OPM): $(OPM)-$(OPM_VERSION)
	@ln -sfn "$(notdir $<)" "$@"
$(PREFLIGHT): $(PREFLIGHT)-$(PREFLIGHT_VERSION)
	@ln -sfn "$(notdir $<)" "$@"

# The control plane: kube-apiserver, kube-controller-manager, kube-scheduler and
# kubectl, etcd and kwok from hack/tools/kubernetes (k8s.io/kubernetes cannot be
# `go install`ed), and the kwok Stages that make
# pods Running and Ready on fake nodes. Point KUBEBUILDER_ASSETS at
# $(CONTROL_PLANE_DIR).
K8S_VERSION_MAJOR = $(word 1,$(subst ., ,$(K8S_VERSION)))
K8S_VERSION_MINOR = $(word 2,$(subst ., ,$(K8S_VERSION)))
K8S_VERSION_LDFLAGS = -s -w $(foreach pkg,k8s.io/component-base/version k8s.io/client-go/pkg/version,\
	-X $(pkg).gitVersion=v$(K8S_VERSION) -X $(pkg).gitMajor=$(K8S_VERSION_MAJOR) \
	-X $(pkg).gitMinor=$(K8S_VERSION_MINOR) -X $(pkg).gitTreeState=clean)
KWOK_STAGE_FILES := node/fast/node-initialize.yaml node/heartbeat/node-heartbeat.yaml \
	pod/fast/pod-ready.yaml pod/fast/pod-complete.yaml pod/fast/pod-delete.yaml

.PHONY: control-plane
control-plane: kube-apiserver kube-controller-manager kube-scheduler kubectl etcd kwok $(KWOK_STAGES) ## Build the local control plane (apiserver, controller-manager, scheduler, kubectl, etcd, kwok) into CONTROL_PLANE_DIR if necessary.

.PHONY: kube-apiserver kube-controller-manager kube-scheduler kubectl etcd kwok
kube-apiserver: $(KUBE_APISERVER)
kube-controller-manager: $(KUBE_CONTROLLER_MANAGER)
kube-scheduler: $(KUBE_SCHEDULER)
kubectl: $(KUBECTL) ## Build kubectl (CONTROL_PLANE_DIR/kubectl, linked as bin/kubectl) if necessary.
etcd: $(ETCD)
kwok: $(KWOK)

$(CONTROL_PLANE_DIR):
	mkdir -p "$(CONTROL_PLANE_DIR)"

# One `go build` for whichever of the four are missing: they share most of
# their packages, so building them together is one compile, not four.
$(KUBE_APISERVER) $(KUBE_CONTROLLER_MANAGER) $(KUBE_SCHEDULER) $(CONTROL_PLANE_KUBECTL) &: | $(CONTROL_PLANE_DIR)
	@$(call kubernetes-module-lock); \
	$(call check-wrapper-version,k8s.io/kubernetes,v$(K8S_VERSION)); \
	pkgs=; for f in $(abspath $(KUBE_APISERVER) $(KUBE_CONTROLLER_MANAGER) $(KUBE_SCHEDULER) $(CONTROL_PLANE_KUBECTL)); do \
		[ -x "$$f" ] || pkgs="$$pkgs k8s.io/kubernetes/cmd/$$(basename "$$f")"; \
	done; \
	[ -n "$$pkgs" ] || exit 0; \
	echo "Building$$pkgs v$(K8S_VERSION) into $(CONTROL_PLANE_DIR)"; \
	$(TOOLS_GO) build -mod=mod -trimpath -ldflags "$(K8S_VERSION_LDFLAGS)" -o "$(abspath $(CONTROL_PLANE_DIR))/" $$pkgs

# bin/kubectl -> CONTROL_PLANE_DIR/kubectl, re-pointed when K8S_VERSION changes.
$(KUBECTL): $(CONTROL_PLANE_KUBECTL) .tools-check | $(LOCALBIN)
	@[ "$$(realpath -- "$@" 2>/dev/null)" = "$$(realpath -- "$(CONTROL_PLANE_KUBECTL)")" ] || ln -sfn "$(CONTROL_PLANE_KUBECTL)" "$@"

# etcd and kwok are rebuilt when their --version is not the pinned one. Both
# come from the Kubernetes wrapper module, with the control plane's libraries
# and build flags: each then compiles only the packages the control plane
# does not have.
$(ETCD): .tools-check | $(CONTROL_PLANE_DIR)
	@$(call kubernetes-module-lock); \
	if [ -x "$@" ] && "$@" --version 2>/dev/null | grep -x "etcd Version: $(ETCD_VERSION:v%=%)" >/dev/null; then exit 0; fi; \
	$(call check-wrapper-version,go.etcd.io/etcd/server/v3,$(ETCD_VERSION)); \
	echo "Building etcd $(ETCD_VERSION) into $(CONTROL_PLANE_DIR)"; \
	$(TOOLS_GO) build -mod=mod -trimpath -ldflags '-s -w' -o "$(abspath $@)" go.etcd.io/etcd/server/v3

$(KWOK): .tools-check | $(KUBE_APISERVER) $(CONTROL_PLANE_DIR)
	@$(call kubernetes-module-lock); \
	if [ -x "$@" ] && "$@" --version 2>/dev/null | grep "^kwok version $(KWOK_VERSION) " >/dev/null; then exit 0; fi; \
	$(call check-wrapper-version,sigs.k8s.io/kwok,$(KWOK_VERSION)); \
	echo "Building kwok $(KWOK_VERSION) into $(CONTROL_PLANE_DIR)"; \
	$(TOOLS_GO) build -mod=mod -trimpath -ldflags '-s -w' -o "$(abspath $@)" sigs.k8s.io/kwok/cmd/kwok

# kwok's default Stages (node initialize and heartbeat, pod ready, complete and
# delete), joined with `---`; pass the file to kwok with --config.
$(KWOK_STAGES): | $(CONTROL_PLANE_DIR)
	@set -e; dir="$(call go-mod-dir,.,sigs.k8s.io/kwok@$(KWOK_VERSION))"; \
	[ -n "$$dir" ] || { echo "cannot download sigs.k8s.io/kwok@$(KWOK_VERSION)" >&2; exit 1; }; \
	echo "Writing $@ from sigs.k8s.io/kwok@$(KWOK_VERSION)"; \
	awk 'FNR == 1 && NR != 1 { print "---" } { print }' \
		$(addprefix "$$dir/kustomize/stage/,$(addsuffix ",$(KWOK_STAGE_FILES))) > "$@.tmp"; \
	mv "$@.tmp" "$@"

.PHONY: node
node: control-plane $(KUBELET) $(KUBE_PROXY) $(CONTAINERD) $(CONTAINERD_SHIM) $(CTR) $(COREDNS) ## Build the real node's kubelet, kube-proxy, containerd and CoreDNS into CONTROL_PLANE_DIR if necessary.

# One `go build` for whichever of the two are missing; they share most of
# their packages with the control plane, so this is mostly a link.
$(KUBELET) $(KUBE_PROXY) &: | $(CONTROL_PLANE_DIR)
	@$(call kubernetes-module-lock); \
	$(call check-wrapper-version,k8s.io/kubernetes,v$(K8S_VERSION)); \
	pkgs=; for f in $(abspath $(KUBELET) $(KUBE_PROXY)); do \
		[ -x "$$f" ] || pkgs="$$pkgs k8s.io/kubernetes/cmd/$$(basename "$$f")"; \
	done; \
	[ -n "$$pkgs" ] || exit 0; \
	echo "Building$$pkgs v$(K8S_VERSION) into $(CONTROL_PLANE_DIR)"; \
	$(TOOLS_GO) build -mod=mod -trimpath -ldflags "$(K8S_VERSION_LDFLAGS)" -o "$(abspath $(CONTROL_PLANE_DIR))/" $$pkgs

# containerd, the shim and ctr, rebuilt together when containerd's --version
# is not the pinned one. Its own wrapper module: containerd 2.4 (the first for
# Kubernetes 1.37's CRI) needs a containerd API that opm's containerd 1.7 does
# not build with. Built with cgo, as the control plane, and with the
# project's versions of what they share (hack/shared-modules.sh), so that it
# compiles only its own packages. No btrfs snapshotter: it needs cgo headers
# this machine has no use for.
CONTAINERD_MODULE := github.com/containerd/containerd/v2
$(CONTAINERD) $(CONTAINERD_SHIM) $(CTR) &: .tools-check | $(CONTROL_PLANE_DIR)
	@set -e; cd "$(TOOLS_MODULES_DIR)/containerd"; \
	if [ -x "$(CONTAINERD_SHIM)" ] && [ -x "$(CTR)" ] && "$(CONTAINERD)" --version 2>/dev/null | grep -qE " $(CONTAINERD_VERSION)( |$$)"; then exit 0; fi; \
	$(call check-wrapper-version,$(CONTAINERD_MODULE),$(CONTAINERD_VERSION)); \
	echo "Building containerd, containerd-shim-runc-v2 and ctr $(CONTAINERD_VERSION) into $(CONTROL_PLANE_DIR)"; \
	$(TOOLS_GO) build -mod=mod -trimpath -tags no_btrfs \
		-ldflags "-s -w -X $(CONTAINERD_MODULE)/version.Version=$(CONTAINERD_VERSION)" -o "$(abspath $(CONTROL_PLANE_DIR))/" \
		$(CONTAINERD_MODULE)/cmd/containerd $(CONTAINERD_MODULE)/cmd/containerd-shim-runc-v2 $(CONTAINERD_MODULE)/cmd/ctr

# CoreDNS, the cluster's DNS server on the real node: the command in
# hack/tools/kubernetes/coredns, CoreDNS's own main with only the plugins the
# local cluster's Corefile uses, rebuilt when its -version is not the pinned
# one. A change of its plugins alone needs the binary removed first.
COREDNS_MODULE := github.com/coredns/coredns
$(COREDNS): .tools-check | $(CONTROL_PLANE_DIR)
	@$(call kubernetes-module-lock); \
	if [ -x "$@" ] && "$@" -version 2>/dev/null | grep -x "CoreDNS-$(COREDNS_VERSION:v%=%)" >/dev/null; then exit 0; fi; \
	$(call check-wrapper-version,$(COREDNS_MODULE),$(COREDNS_VERSION)); \
	echo "Building coredns $(COREDNS_VERSION) into $(CONTROL_PLANE_DIR)"; \
	$(TOOLS_GO) build -mod=mod -trimpath -ldflags '-s -w' -o "$(abspath $@)" ./coredns

# The memcached release the operator ships (DefaultMemcachedImage's), as
# Debian trixie packages it, unpacked into MEMCACHED_ROOT: make test runs it
# on the host through the root's own loader (controllers/operand proves the
# command line the operator builds against it), and the real node's image is
# built from it. The host's own package (bookworm's 1.6.18) is the oldest
# release supported, which the compatibility proofs run.
MEMCACHED_DEBIAN_VERSION ?= 1.6.38-1
MEMCACHED_ROOT ?= $(LOCALBIN)/memcached-$(MEMCACHED_DEBIAN_VERSION)
export MEMCACHED_ROOT
.PHONY: memcached
memcached: $(MEMCACHED_ROOT)/usr/bin/memcached ## Unpack the shipped memcached release (Debian trixie's) into MEMCACHED_ROOT, and install the host's Debian memcached (the oldest supported) if missing; needs root to install.
	hack/node-packages.sh memcached
$(MEMCACHED_ROOT)/usr/bin/memcached:
	hack/memcached-release.sh $(MEMCACHED_DEBIAN_VERSION) $(MEMCACHED_ROOT)

.PHONY: node-packages
node-packages: $(MEMCACHED_ROOT)/usr/bin/memcached ## Install the real node's Debian packages (runc, CNI plugins, iptables, conntrack, memcached, busybox-static) if missing, and unpack the shipped memcached release its image holds; needs root.
	hack/node-packages.sh $(NODE_PACKAGES)

.PHONY: .tools-check
.tools-check: ;

# go-install-tool will 'go install' any package with custom target and name of binary, if it doesn't exist
# (kubebuilder's pattern: bin/<tool>-<version>, and a relative link bin/<tool>
# to it, re-pointed when the version changes).
# $1 - target path with name of binary
# $2 - package url which can be installed
# $3 - specific version of package
# $4 - go install flags (optional)
define go-install-tool
@[ -f "$(1)-$(3)" ] || { \
set -e; \
package=$(2)@$(3) ;\
echo "Building $${package} from the module proxy" ;\
rm -f "$(1)" ;\
GOBIN="$(abspath $(LOCALBIN))" $(TOOLS_GO) install $(4) $${package} ;\
mv "$(LOCALBIN)/$$(basename "$(1)")" "$(1)-$(3)" ;\
} ;\
[ "$$(realpath -- "$(1)" 2>/dev/null)" = "$$(realpath -- "$(1)-$(3)")" ] || ln -sf "$$(basename "$(1)-$(3)")" "$(1)"
endef

# go-build-tool builds a command of a wrapper module hack/tools/<dir> into
# <target>-<version> and links <target> to it, as go-install-tool does.
# In the ldflags, $$commit and $$date are the module's tag commit and time.
# $1 - target path with name of binary
# $2 - wrapper module directory under hack/tools
# $3 - module path of the tool
# $4 - specific version of the module (must be the wrapper's requirement)
# $5 - package to build
# $6 - environment for go build
# $7 - build tags
# $8 - ldflags
define go-build-tool
@{ [ -f "$(abspath $(1))-$(4)" ] || ( \
set -e; \
cd "$(TOOLS_MODULES_DIR)/$(2)"; \
$(call check-wrapper-version,$(3),$(4)); \
info="$$($(TOOLS_GO) list -m -f '{{.Time.UTC.Format "2006-01-02T15:04:05Z"}} {{with .Origin}}{{.Hash}}{{end}}' $(3)@$(4))"; \
date="$${info%% *}"; commit="$${info#* }"; \
echo "Building $(5)@$(4) from hack/tools/$(2)"; \
rm -f "$(abspath $(1))"; \
$(6) $(TOOLS_GO) build -mod=mod -trimpath -tags "$(7)" -ldflags "$(8)" -o "$(abspath $(1))-$(4)" $(5); \
); } && { [ "$$(realpath -- "$(1)" 2>/dev/null)" = "$$(realpath -- "$(1)-$(4)")" ] || ln -sf "$$(basename "$(1)-$(4)")" "$(1)"; }
endef

# kubernetes-module-lock (shell): enters hack/tools/kubernetes and waits until
# no other make builds there. Its commands share most of their packages, and
# two concurrent go builds (CI builds tools beside make test) would compile
# each shared package twice; after the wait, a recipe builds only what is
# still missing, from the packages the other compiled.
define kubernetes-module-lock
set -e; cd "$(TOOLS_MODULES_DIR)/kubernetes"; mkdir -p "$(abspath $(LOCALBIN))"; \
exec 9>"$(abspath $(LOCALBIN))/.kubernetes-module.lock"; flock 9
endef

# check-wrapper-version (shell, run inside a wrapper module): fails unless the
# module requires $1 at version $2.
define check-wrapper-version
have="$$($(TOOLS_GO) list -mod=mod -m -f '{{.Version}}' $(1))"; \
[ "$$have" = "$(2)" ] || { echo "$$PWD/go.mod requires $(1) $$have, not $(2): update the wrapper module (see its tools.go)" >&2; exit 1; }
endef

# go-mod-dir (make function): the module cache directory of a module, downloaded
# if missing. $1 - directory to run go in; $2 - module, or module@version
go-mod-dir = $(shell cd "$(1)" && $(TOOLS_GO) mod download -json $(2) | sed -n 's/^[[:space:]]*"Dir": "\([^"]*\)".*/\1/p')

.DEFAULT_GOAL := $(TOOLS_MK_DEFAULT_GOAL)
