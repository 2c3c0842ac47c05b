# memcached-operator: the Operator SDK go/v4 Makefile, with every tool built
# from the Go module proxy into ./bin (see hack/tools.mk) and a local control
# plane for tests and `make run` (hack/local-cluster/localcluster).

# VERSION is the operator's version, used for the bundle and images.
VERSION ?= 0.1.0

# PREVIOUS_VERSION is the release VERSION upgrades from: the CSV's
# spec.replaces names it, so a Subscription steps through every release of
# its channel. Empty for the first release, which replaces nothing. The
# CSV's olm.skipRange ('>=0.0.0 <VERSION') lets any older version, a pruned
# one too, upgrade straight to this one.
PREVIOUS_VERSION ?=

# CHANNELS lists the bundle's channels, comma separated: fast gets a release
# first, stable (the default) once it has proven itself. make catalog puts
# each bundle in every one of them.
CHANNELS ?= fast,stable

# DEFAULT_CHANNEL is the channel a Subscription without one follows.
DEFAULT_CHANNEL ?= stable
BUNDLE_METADATA_OPTS ?= --channels=$(CHANNELS) --default-channel=$(DEFAULT_CHANNEL)

# OPENSHIFT_VERSIONS is the bundle's com.redhat.openshift.versions: the
# OpenShift releases it is offered to ("v4.16" means 4.16 and later).
# test/bundle checks that it is the first OpenShift built on the CSV's
# minKubeVersion.
OPENSHIFT_VERSIONS ?= v4.16

# IMAGE_TAG_BASE is the registry and name every image of this project shares.
IMAGE_TAG_BASE ?= example.com/memcached-operator

# BUNDLE_IMG is the bundle image to build and push.
BUNDLE_IMG ?= $(IMAGE_TAG_BASE)-bundle:v$(VERSION)

# BUNDLE_GEN_FLAGS are the flags of `operator-sdk generate bundle`.
BUNDLE_GEN_FLAGS ?= -q --overwrite=false --version $(VERSION) $(BUNDLE_METADATA_OPTS)

# USE_IMAGE_DIGESTS=true makes the release bundle: IMG and every
# RELATED_IMAGE_* image pinned to the digest its tag names in its registry
# (the images must be pushed first), so that a disconnected cluster's
# ImageDigestMirrorSet serves every pull (docs/disconnected.md). hack/bundle.sh
# resolves them with crane rather than operator-sdk's --use-image-digests (it
# says why). The committed bundle/ is the development bundle, by tag.
USE_IMAGE_DIGESTS ?= false

# The Operator SDK release whose layout and `bundle` commands this project
# follows; hack/tools/operator-sdk pins the same version.
OPERATOR_SDK_VERSION ?= v1.31.0

# IMG is the operator image.
IMG ?= $(IMAGE_TAG_BASE):v$(VERSION)

# TLS_RELOADER_VERSION is the version of the sidecar of memcached pods that
# serve TLS. It moves apart from VERSION: the sidecar's image is part of
# every such pod, so an operator release that leaves it alone must leave
# it at the same tag, or the upgrade would replace every memcached pod.
TLS_RELOADER_VERSION ?= 0.1.0

# TLS_RELOADER_IMG is the sidecar's image (the Dockerfile's tls-reloader
# stage).
TLS_RELOADER_IMG ?= $(IMAGE_TAG_BASE)-tls-reloader:v$(TLS_RELOADER_VERSION)

# GOFIPS140 is the Go Cryptographic Module that the manager and the TLS
# reloader are built with (docs/fips.md): v1.0.0 holds CMVP certificate
# #5247, and a binary built with it runs in FIPS 140-3 mode by default
# (GODEBUG fips140=on). The Dockerfile's default and the tests' builds
# (hack/repo reads this line) follow it; hack/local-cluster/images
# checks that the Dockerfile agrees.
GOFIPS140 ?= v1.0.0

# CATALOG_IMG is the file-based catalog image.
CATALOG_IMG ?= $(IMAGE_TAG_BASE)-catalog:v$(VERSION)

# CONTAINER_TOOL builds and pushes images (docker or podman).
CONTAINER_TOOL ?= docker

# Recipes run in bash with errors fatal, so a failing pipe fails the target.
SHELL = /usr/bin/env bash -o pipefail
.SHELLFLAGS = -ec

# Every go command make runs compiles without DWARF: nothing here reads it
# (stack traces and profiles use the symbol table), writing it is a good part
# of the compiler's work, and one flag set for all keeps one build cache entry
# per package. And with -trimpath, as the tools are built: the tests' build of
# the Kubernetes libraries is then the control plane's, where go.mod and
# hack/tools/kubernetes/go.mod select the same versions. To debug with delve,
# run go yourself with GOFLAGS unset.
export GOFLAGS := $(strip $(GOFLAGS) -trimpath -gcflags=all=-dwarf=false)

GOBIN ?= $(shell go env GOBIN)
ifeq (,$(GOBIN))
GOBIN = $(shell go env GOPATH)/bin
endif

## The local cluster of make run and make local-cluster (hack/local-cluster)
LOCAL_CLUSTER_DIR ?= $(CURDIR)/.local-cluster
# The local cluster keeps its objects across a stop and a start (in
# LOCAL_CLUSTER_DIR); LOCAL_CLUSTER_FRESH=true starts it empty.
LOCAL_CLUSTER_FRESH ?=
# LOCAL_CLUSTER_NODE is the node that runs the local cluster's pods: real
# (kubelet, containerd, runc: memcached really serves; root on Linux), kwok
# (fake pods, Ready but running nothing), or auto: real wherever it can run.
# The tool chooses, and says which and why.
LOCAL_CLUSTER_NODE ?= auto
# runc, the CNI plugins (bridge, host-local, loopback), iptables, iproute2,
# conntrack for kube-proxy, memcached for the memcached image and
# busybox-static for the client image (nslookup, nc) the node imports.
NODE_PACKAGES ?= runc containernetworking-plugins iptables iproute2 conntrack memcached busybox-static
# The tool (hack/local-cluster), built as the tests build their packages:
# a setting of the manager's build (GOFIPS140) would compile every package
# it imports once more, a build of its own.
LOCAL_CLUSTER ?= $(LOCALBIN)/local-cluster
LOCAL_CLUSTER_FLAGS = --dir "$(LOCAL_CLUSTER_DIR)" --bin-dir "$(CONTROL_PLANE_DIR)"
LOCAL_CLUSTER_NODE_FLAGS = $(LOCAL_CLUSTER_FLAGS) --node "$(LOCAL_CLUSTER_NODE)" --packages "$(NODE_PACKAGES)"
# LOCAL_CLUSTER_IMAGES are image archives (docker save, OCI layout tars)
# that make local-cluster imports into the real node when it starts, as
# kind load image-archive does: an operator image for make deploy, say.
LOCAL_CLUSTER_IMAGES ?=
LOCAL_CLUSTER_UP_FLAGS = $(LOCAL_CLUSTER_NODE_FLAGS) $(if $(filter true,$(LOCAL_CLUSTER_FRESH)),--fresh) $(foreach image,$(LOCAL_CLUSTER_IMAGES),--image "$(image)")

.PHONY: all
all: build

##@ General

.PHONY: help
help: ## Display this help.
	@awk 'BEGIN {FS = ":.*##"; printf "\nUsage:\n  make \033[36m<target>\033[0m\n"} /^[a-zA-Z_0-9-]+:.*?##/ { printf "  \033[36m%-22s\033[0m %s\n", $$1, $$2 } /^##@/ { printf "\n\033[1m%s\033[0m\n", substr($$0, 5) } ' $(MAKEFILE_LIST)

##@ Development

.PHONY: manifests
manifests: controller-gen ## Generate the CRD, RBAC ClusterRole and webhook configurations from markers.
	"$(CONTROLLER_GEN)" rbac:roleName=manager-role crd webhook paths="./..." output:crd:artifacts:config=config/crd/bases

.PHONY: generate
generate: controller-gen ## Generate DeepCopy methods for the API types.
	"$(CONTROLLER_GEN)" object paths="./api/..."

# The repository's Go modules: the operator's, the local cluster tool's and
# the tests' (suites, their framework, the bench). Each builds from its own
# go.mod, so the operator's names only what the manager and its sidecar
# import; the other two reach the operator's packages through a replace.
GO_MODULES = . hack/local-cluster test

.PHONY: fmt
fmt: ## Run go fmt.
	for m in $(GO_MODULES); do go -C $$m fmt ./...; done

.PHONY: vet
vet: ## Run go vet.
	for m in $(GO_MODULES); do go -C $$m vet ./...; done

# Unit and integration tests: the product packages, the test framework and the
# suites that need no whole cluster with an operator. The suites under test/
# that run one have targets of their own, one each, and run with -count=1:
# they build and run the operator as a process, which Go's test cache cannot
# see, so a cached ok could hide a change to the operator.
# Within the tests' module, test/, the packages make test runs:
TEST_UNIT_PACKAGES = ./framework/... ./controllers/... ./memcached/... ./bundle/... ./bench/...

# Every suite runs as `go test -json` through hack/testreport, which prints
# what plain go test would and, when TEST_REPORT names a file (.ci/run's
# does), records which packages passed, failed and skipped. Without go
# test's vet: make vet (which make test runs) checks every package of each
# module with all of vet's analyzers, and go test's subset of them would
# analyse every dependency once more.
#
# $(call go-test,module,packages and flags) runs go test in one of
# GO_MODULES, through the reporter.
go-test = go test -C $(1) -json -vet=off $(2) | go run ./hack/testreport

# The control plane before vet: vet compiles the tests' dependencies, most of
# which the control plane's build (or one of the tools' beside it, under its
# lock) has then compiled already.
.PHONY: test
test: manifests generate control-plane fmt vet memcached prometheus-operator-crds promtool ## Run the unit and integration tests against the built control plane, and the alerting rules' promtool tests.
	export KUBEBUILDER_ASSETS="$(CONTROL_PLANE_DIR)" PROMTOOL="$(PROMTOOL)"; rc=0; \
	$(call go-test,.,./... -coverprofile cover.out) || rc=1; \
	$(call go-test,hack/local-cluster,./...) || rc=1; \
	$(call go-test,test,$(TEST_UNIT_PACKAGES)) || rc=1; \
	exit $$rc

# LABELS selects a part of the end-to-end suite by its specs' labels, with
# any Ginkgo label filter (tls, node && !faults); empty runs all of it.
LABELS ?=

# E2E_CLUSTER is the cluster the end-to-end suite runs on: local, one it
# starts on this host with the real node; or existing, the cluster of
# KUBECONFIG, started by anyone, on which the suite leaves out the specs
# labelled host, names them when it ends (printing the suite's whole
# output), and needs none of the local cluster's tools.
E2E_CLUSTER ?= local
E2E_LOCAL_TOOLS = node node-packages prometheus-operator-crds operator-sdk olm opm olm-manifests crane

.PHONY: test-e2e
test-e2e: manifests generate kustomize kubectl $(if $(filter existing,$(E2E_CLUSTER)),,$(E2E_LOCAL_TOOLS)) ## The end-to-end suite on one local cluster with the real node (root only): memcached pods that serve, the kubectl apply install path with cert-manager, the operator as a pod, its metrics, faults, security, the bundle through a real OLM in every install mode, operator-sdk scorecard. LABELS=tls runs a part; E2E_CLUSTER=existing runs on the cluster of KUBECONFIG.
	$(if $(filter existing,$(E2E_CLUSTER)),export TEST_VERBOSE=1;) E2E_CLUSTER="$(E2E_CLUSTER)" KUBEBUILDER_ASSETS="$(CONTROL_PLANE_DIR)" OLM_BIN_DIR="$(abspath $(OLM_BIN_DIR))" OLM_CRDS_DIR="$(OLM_CRDS_DIR)" OPM="$(abspath $(OPM))" \
		OPENSHIFT_PROXY_CRD="$(OPENSHIFT_PROXY_CRD)" $(call go-test,test,./e2e/... -count=1 -timeout 60m $(if $(LABELS),-ginkgo.label-filter='$(LABELS)') $(TEST_ARGS))

.PHONY: test-local-cluster
test-local-cluster: manifests generate kustomize control-plane node node-packages ## make run as a new user runs it, make local-cluster and a kept cluster restarted with the real node (root only): each starts clusters of its own.
	KUBEBUILDER_ASSETS="$(CONTROL_PLANE_DIR)" $(call go-test,test,./devcluster/... -count=1 -timeout 30m $(TEST_ARGS))

.PHONY: test-disconnected
test-disconnected: manifests kustomize operator-sdk crane memcached ## The release bundle (make bundle USE_IMAGE_DIGESTS=true in a copy of the tree, its registries stood in for on loopback) names every image by the digest pushed.
	$(call go-test,test,./disconnected/... -count=1 -timeout 15m $(TEST_ARGS))

# Peers' checks. test-preflight needs no cluster and no root: the image is
# served from a loopback registry in the test process.
.PHONY: test-preflight
test-preflight: preflight ## openshift-preflight's container policy against the operator image, offline (every check passes but the three that need a Red Hat base image).
	$(call go-test,test,./preflight/... -count=1 -timeout 15m $(TEST_ARGS))

# FUZZTIME is how long `make fuzz` runs each fuzz target.
FUZZTIME ?= 15s

.PHONY: fuzz
fuzz: ## Run every fuzz target for FUZZTIME each (the committed corpora always run in make test).
	FUZZTIME=$(FUZZTIME) hack/fuzz.sh

.PHONY: bench
bench: manifests generate node node-packages ## Benchmarks: memcached on the real node against the host, filled to its memory, and rolled under a sharding client (root), then N=1000 Memcached and 10k unrelated pods on a local cluster; writes docs/bench and docs/benchmarks.md's results.
	KUBEBUILDER_ASSETS="$(CONTROL_PLANE_DIR)" go -C test run ./bench -n 1000 $(BENCH_ARGS)

.PHONY: bench-memcached
bench-memcached: manifests generate node node-packages ## Only the memcached benchmark: a pod at the operator's defaults on the real node against the same memcached on the host (root); writes docs/bench/memcached.json and its section of docs/benchmarks.md.
	KUBEBUILDER_ASSETS="$(CONTROL_PLANE_DIR)" go -C test run ./bench -scenarios memcached $(BENCH_ARGS)

.PHONY: bench-memory
bench-memory: manifests generate node node-packages ## Only the memory benchmark: Memcached of 64Mi, 256Mi and 1Gi (and 64Mi with TLS) filled on the real node, the containers' peak memory against their limits (root); fails on an OOM kill, a restart or no eviction; writes docs/bench/memory.json and its section of docs/benchmarks.md.
	KUBEBUILDER_ASSETS="$(CONTROL_PLANE_DIR)" go -C test run ./bench -scenarios memory $(BENCH_ARGS)

.PHONY: bench-rollout
bench-rollout: manifests generate node node-packages ## Only the rollout benchmark: a size-3 Memcached on the real node rolled under a sharding client, with pacing by warmth and without (root); writes docs/bench/rollout.json, docs/bench/rollout.svg and its section of docs/benchmarks.md.
	KUBEBUILDER_ASSETS="$(CONTROL_PLANE_DIR)" go -C test run ./bench -scenarios rollout $(BENCH_ARGS)

.PHONY: bench-smoke
bench-smoke: manifests generate node node-packages ## Every benchmark scenario at N=20, 2 s of memcached load, a 64Mi Memcached filled and a size-3 one rolled over 2,000 keys (root); fails if one cannot complete, a memcached is OOM-killed, a client is given fewer addresses than pods, or a counted target (writes, idle reconciles) is missed.
	KUBEBUILDER_ASSETS="$(CONTROL_PLANE_DIR)" go -C test run ./bench -smoke $(BENCH_ARGS)

.PHONY: lint
lint: golangci-lint ## Run golangci-lint.
	for m in $(GO_MODULES); do (cd $$m && "$(GOLANGCI_LINT)" run); done

.PHONY: lint-fix
lint-fix: golangci-lint ## Run golangci-lint and apply its fixes.
	for m in $(GO_MODULES); do (cd $$m && "$(GOLANGCI_LINT)" run --fix); done

.PHONY: verify
verify: manifests generate ## Fail, changing nothing committed, when generated files are stale, code is not gofmt'ed, go.mod is not tidy or builds a module it shares with hack/tools/kubernetes or hack/tools/containerd at another version.
	@git diff --exit-code -- api config bundle || { echo "generated files are stale: run make manifests generate and commit" >&2; exit 1; }
	@test -z "$$(git status --porcelain -- api config)" || { git status --porcelain -- api config; echo "untracked generated files" >&2; exit 1; }
	@files="$$(gofmt -l $$(git ls-files '*.go'))"; test -z "$$files" || { echo "not gofmt'ed (run make fmt):" $$files >&2; exit 1; }
	@for m in $(GO_MODULES); do go -C $$m mod tidy -diff || { echo "$$m/go.mod or go.sum is not tidy: run go mod tidy in $$m" >&2; exit 1; }; done
	@hack/shared-modules.sh

##@ Build

.PHONY: build
build: manifests generate fmt vet ## Build the manager and the TLS sidecar (bin/manager, bin/tls-reloader) as the Dockerfile does: static, -trimpath, with the Go Cryptographic Module GOFIPS140.
	CGO_ENABLED=0 GOFIPS140="$(GOFIPS140)" go build -trimpath -ldflags "-s -w" -o bin/manager .
	CGO_ENABLED=0 GOFIPS140="$(GOFIPS140)" go build -trimpath -ldflags "-s -w" -o bin/tls-reloader ./cmd/tls-reloader

.PHONY: run
run: run-refuse-if-running manifests generate fmt vet kustomize $(if $(KUBECONFIG)$(wildcard $(HOME)/.kube/config),,local-cluster-tools) ## Run the operator from your host, on a local cluster when none is configured (its pods on the real node as root on Linux, else kwok's; LOCAL_CLUSTER_NODE=real or kwok chooses).
	KUSTOMIZE="$(KUSTOMIZE)" KUBECTL="$(KUBECTL)" GOFIPS140="$(GOFIPS140)" CONTROL_PLANE_DIR="$(CONTROL_PLANE_DIR)" \
		LOCAL_CLUSTER="$(LOCAL_CLUSTER)" LOCAL_CLUSTER_DIR="$(LOCAL_CLUSTER_DIR)" LOCAL_CLUSTER_NODE="$(LOCAL_CLUSTER_NODE)" \
		LOCAL_CLUSTER_FRESH="$(LOCAL_CLUSTER_FRESH)" NODE_PACKAGES="$(NODE_PACKAGES)" hack/run.sh

# A second make run in the same directory refuses before building anything.
.PHONY: run-refuse-if-running
run-refuse-if-running:
	@LOCAL_CLUSTER_DIR="$(LOCAL_CLUSTER_DIR)" hack/run.sh --refuse-if-running

.PHONY: docker-build
docker-build: ## Build the operator image (IMG) and the TLS sidecar's image (TLS_RELOADER_IMG), each labelled with its version.
	$(CONTAINER_TOOL) build --build-arg VERSION=$(VERSION) --build-arg GOFIPS140=$(GOFIPS140) -t ${IMG} .
	$(CONTAINER_TOOL) build --target tls-reloader --build-arg TLS_RELOADER_VERSION=$(TLS_RELOADER_VERSION) --build-arg GOFIPS140=$(GOFIPS140) -t ${TLS_RELOADER_IMG} .

.PHONY: docker-push
docker-push: ## Push the operator image and the TLS sidecar's image.
	$(CONTAINER_TOOL) push ${IMG}
	$(CONTAINER_TOOL) push ${TLS_RELOADER_IMG}

.PHONY: build-installer
build-installer: manifests generate kustomize ## Write dist/install.yaml: CRD and operator, for kubectl apply.
	mkdir -p dist
	cd config/manager && "$(KUSTOMIZE)" edit set image controller=${IMG}
	"$(KUSTOMIZE)" build config/default > dist/install.yaml

##@ Local cluster

.PHONY: local-cluster
local-cluster: local-cluster-tools ## Start the local cluster in the background (kubeconfig: .local-cluster/kubeconfig) with the objects it held when stopped; LOCAL_CLUSTER_FRESH=true starts it empty; LOCAL_CLUSTER_NODE as for make run.
	"$(LOCAL_CLUSTER)" up $(LOCAL_CLUSTER_UP_FLAGS)

.PHONY: local-cluster-down
local-cluster-down: local-cluster-tool ## Stop the local cluster, keeping its objects for the next start; no process, mount, network interface or iptables rule of it is left.
	"$(LOCAL_CLUSTER)" down $(LOCAL_CLUSTER_FLAGS)

.PHONY: local-cluster-status
local-cluster-status: local-cluster-tool ## Say whether the local cluster runs, with which node, and where its kubeconfig is.
	@"$(LOCAL_CLUSTER)" status $(LOCAL_CLUSTER_FLAGS) || [ $$? -eq 3 ]

# What the local cluster runs: the control plane, and the real node's
# binaries and packages only when the tool chooses that node.
.PHONY: local-cluster-tools
local-cluster-tools: control-plane local-cluster-tool
	@if "$(LOCAL_CLUSTER)" node $(LOCAL_CLUSTER_NODE_FLAGS) | grep -q '^real '; then $(MAKE) --no-print-directory node node-packages; fi

.PHONY: local-cluster-tool
local-cluster-tool: | $(LOCALBIN)
	go build -C hack/local-cluster -o "$(abspath $(LOCAL_CLUSTER))" .

##@ Deployment

ifndef ignore-not-found
  ignore-not-found = false
endif

.PHONY: install
install: manifests kustomize kubectl ## Install the CRD into the cluster of ~/.kube/config (or KUBECONFIG).
	"$(KUSTOMIZE)" build config/crd | "$(KUBECTL)" apply -f -

.PHONY: uninstall
uninstall: manifests kustomize kubectl ## Remove the CRD from the cluster. ignore-not-found=true ignores missing objects.
	"$(KUSTOMIZE)" build config/crd | "$(KUBECTL)" delete --ignore-not-found=$(ignore-not-found) -f -

.PHONY: deploy
deploy: manifests kustomize kubectl ## Deploy the operator (needs cert-manager) to the cluster.
	cd config/manager && "$(KUSTOMIZE)" edit set image controller=${IMG}
	"$(KUSTOMIZE)" build config/default | "$(KUBECTL)" apply -f -

.PHONY: undeploy
undeploy: kustomize kubectl ## Remove the operator from the cluster. ignore-not-found=true ignores missing objects.
	"$(KUSTOMIZE)" build config/default | "$(KUBECTL)" delete --ignore-not-found=$(ignore-not-found) -f -

##@ Bundle and catalog

# BUNDLE_CREATED_AT is the CSV's createdAt annotation: the release date of
# VERSION. operator-sdk writes the current time; a fixed value makes
# `make bundle` reproducible. Set it when you bump VERSION.
BUNDLE_CREATED_AT ?= 2026-11-30T00:00:00Z

BUNDLE_DIR := bundle

.PHONY: bundle
bundle: manifests kustomize operator-sdk $(if $(filter true,$(USE_IMAGE_DIGESTS)),crane) ## Regenerate bundle/ and bundle.Dockerfile from config/ for IMG and VERSION, and validate them; USE_IMAGE_DIGESTS=true pins every image by digest (a release; images pushed first).
	OPERATOR_SDK="$(OPERATOR_SDK)" KUSTOMIZE="$(KUSTOMIZE)" CRANE="$(CRANE)" IMG="$(IMG)" BUNDLE_DIR="$(BUNDLE_DIR)" BUNDLE_GEN_FLAGS="$(BUNDLE_GEN_FLAGS)" \
		BUNDLE_CREATED_AT="$(BUNDLE_CREATED_AT)" USE_IMAGE_DIGESTS="$(USE_IMAGE_DIGESTS)" OPENSHIFT_VERSIONS="$(OPENSHIFT_VERSIONS)" \
		VERSION="$(VERSION)" PREVIOUS_VERSION="$(PREVIOUS_VERSION)" hack/bundle.sh

.PHONY: bundle-validate
bundle-validate: operator-sdk ## Validate the committed bundle/ as it is with operator-sdk's operatorframework suite (no regeneration).
	OPERATOR_SDK="$(OPERATOR_SDK)" BUNDLE_DIR="$(BUNDLE_DIR)" hack/bundle-validate.sh

.PHONY: bundle-build
bundle-build: ## Build the bundle image.
	$(CONTAINER_TOOL) build -f bundle.Dockerfile -t $(BUNDLE_IMG) .

.PHONY: bundle-push
bundle-push: ## Push the bundle image.
	$(CONTAINER_TOOL) push $(BUNDLE_IMG)

# BUNDLE_IMGS lists the bundle images catalog-build puts in the catalog,
# comma separated, oldest first.
BUNDLE_IMGS ?= $(BUNDLE_IMG)

# CATALOG_DIR is where the file-based catalog is written (git ignores it).
CATALOG_DIR ?= catalog
# CATALOG_BUNDLES are the bundles `make catalog` renders, comma or space
# separated, oldest first: bundle directories (rendered offline; their image
# field stays empty and the manifests travel inside the catalog) or bundle
# images (pulled). In every channel of CHANNELS each replaces the one before.
CATALOG_BUNDLES ?= $(BUNDLE_DIR)
CATALOG_PACKAGE := memcached-operator

.PHONY: catalog
catalog: opm ## Render CATALOG_BUNDLES (default bundle/, offline) into a file-based catalog in catalog/ and validate it with opm.
	OPM="$(OPM)" CATALOG_DIR="$(CATALOG_DIR)" CATALOG_PACKAGE="$(CATALOG_PACKAGE)" CATALOG_BUNDLES="$(CATALOG_BUNDLES)" \
		CHANNELS="$(CHANNELS)" DEFAULT_CHANNEL="$(DEFAULT_CHANNEL)" hack/catalog.sh

.PHONY: catalog-build
catalog-build: opm ## Render BUNDLE_IMGS (pulled from their registry) into catalog/, validate it and build the catalog image.
	$(MAKE) catalog CATALOG_BUNDLES="$(BUNDLE_IMGS)"
	rm -f catalog.Dockerfile
	"$(OPM)" generate dockerfile "$(CATALOG_DIR)"
	$(CONTAINER_TOOL) build -f catalog.Dockerfile -t $(CATALOG_IMG) .

.PHONY: catalog-push
catalog-push: ## Push the catalog image.
	$(CONTAINER_TOOL) push $(CATALOG_IMG)

include hack/tools.mk
