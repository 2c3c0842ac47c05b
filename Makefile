# memcached-operator: the Operator SDK go/v4 Makefile, with every tool built
# from the Go module proxy into ./bin (see hack/tools.mk) and a local control
# plane for tests and `make run` (test/localcluster).

# VERSION is the operator's version, used for the bundle and images.
VERSION ?= 0.1.0

# CHANNELS lists the bundle's channels, comma separated ("candidate,fast,stable").
ifneq ($(origin CHANNELS), undefined)
BUNDLE_CHANNELS := --channels=$(CHANNELS)
endif
CHANNELS ?= alpha

# DEFAULT_CHANNEL is the channel a Subscription without one follows.
ifneq ($(origin DEFAULT_CHANNEL), undefined)
BUNDLE_DEFAULT_CHANNEL := --default-channel=$(DEFAULT_CHANNEL)
endif
DEFAULT_CHANNEL ?= alpha
BUNDLE_METADATA_OPTS ?= $(BUNDLE_CHANNELS) $(BUNDLE_DEFAULT_CHANNEL)

# IMAGE_TAG_BASE is the registry and name every image of this project shares.
IMAGE_TAG_BASE ?= example.com/memcached-operator

# BUNDLE_IMG is the bundle image to build and push.
BUNDLE_IMG ?= $(IMAGE_TAG_BASE)-bundle:v$(VERSION)

# BUNDLE_GEN_FLAGS are the flags of `operator-sdk generate bundle`.
BUNDLE_GEN_FLAGS ?= -q --overwrite=false --version $(VERSION) $(BUNDLE_METADATA_OPTS)

# USE_IMAGE_DIGESTS=true pins the images in the bundle by digest (needs the
# images pushed).
USE_IMAGE_DIGESTS ?= false
ifeq ($(USE_IMAGE_DIGESTS), true)
	BUNDLE_GEN_FLAGS += --use-image-digests
endif

# The Operator SDK release whose layout and `bundle` commands this project
# follows; hack/tools/operator-sdk pins the same version.
OPERATOR_SDK_VERSION ?= v1.31.0

# IMG is the operator image.
IMG ?= $(IMAGE_TAG_BASE):v$(VERSION)

# CATALOG_IMG is the file-based catalog image.
CATALOG_IMG ?= $(IMAGE_TAG_BASE)-catalog:v$(VERSION)

# CONTAINER_TOOL builds and pushes images (docker or podman).
CONTAINER_TOOL ?= docker

# Recipes run in bash with errors fatal, so a failing pipe fails the target.
SHELL = /usr/bin/env bash -o pipefail
.SHELLFLAGS = -ec

GOBIN ?= $(shell go env GOBIN)
ifeq (,$(GOBIN))
GOBIN = $(shell go env GOPATH)/bin
endif

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

.PHONY: fmt
fmt: ## Run go fmt.
	go fmt ./...

.PHONY: vet
vet: ## Run go vet.
	go vet ./...

# Unit and integration suites. The end-to-end suites (the local cluster's own,
# test/e2e) run in test-e2e.
E2E_PACKAGES = ./test/localcluster/... ./test/e2e/...
TEST_PACKAGES = $$(go list ./... | grep -v -e /test/localcluster -e /test/e2e)

.PHONY: test
test: manifests generate fmt vet control-plane ## Run the unit and integration tests against the built control plane.
	KUBEBUILDER_ASSETS="$(CONTROL_PLANE_DIR)" go test $(TEST_PACKAGES) -coverprofile cover.out

.PHONY: test-e2e
test-e2e: manifests generate control-plane kustomize ## Run the end-to-end tests on a local cluster (etcd, apiserver, kcm, scheduler, kwok).
	KUBEBUILDER_ASSETS="$(CONTROL_PLANE_DIR)" go test $(E2E_PACKAGES) -timeout 30m

.PHONY: lint
lint: golangci-lint ## Run golangci-lint.
	"$(GOLANGCI_LINT)" run

.PHONY: lint-fix
lint-fix: golangci-lint ## Run golangci-lint and apply its fixes.
	"$(GOLANGCI_LINT)" run --fix

.PHONY: verify-generated
verify-generated: manifests generate ## Fail when generated files differ from what is committed.
	@git diff --exit-code -- api config bundle || { echo "generated files are stale: run make manifests generate and commit" >&2; exit 1; }
	@test -z "$$(git status --porcelain -- api config)" || { git status --porcelain -- api config; echo "untracked generated files" >&2; exit 1; }

##@ Build

.PHONY: build
build: manifests generate fmt vet ## Build the manager binary.
	go build -o bin/manager main.go

.PHONY: run
run: manifests generate fmt vet kustomize control-plane ## Run the operator from your host, on a local cluster when none is configured.
	KUSTOMIZE="$(KUSTOMIZE)" KUBECTL="$(KUBECTL)" CONTROL_PLANE_DIR="$(CONTROL_PLANE_DIR)" hack/run.sh

.PHONY: docker-build
docker-build: ## Build the operator image.
	$(CONTAINER_TOOL) build -t ${IMG} .

.PHONY: docker-push
docker-push: ## Push the operator image.
	$(CONTAINER_TOOL) push ${IMG}

.PHONY: build-installer
build-installer: manifests generate kustomize ## Write dist/install.yaml: CRD and operator, for kubectl apply.
	mkdir -p dist
	cd config/manager && "$(KUSTOMIZE)" edit set image controller=${IMG}
	"$(KUSTOMIZE)" build config/default > dist/install.yaml

##@ Local cluster

LOCAL_CLUSTER_DIR ?= $(CURDIR)/.local-cluster

.PHONY: local-cluster
local-cluster: control-plane ## Start the local cluster in the background (kubeconfig: .local-cluster/kubeconfig).
	CONTROL_PLANE_DIR="$(CONTROL_PLANE_DIR)" LOCAL_CLUSTER_DIR="$(LOCAL_CLUSTER_DIR)" hack/local-cluster.sh up

.PHONY: local-cluster-down
local-cluster-down: ## Stop the local cluster and wait until none of its processes is left.
	LOCAL_CLUSTER_DIR="$(LOCAL_CLUSTER_DIR)" hack/local-cluster.sh down

##@ Deployment

ifndef ignore-not-found
  ignore-not-found = false
endif

.PHONY: install
install: manifests kustomize ## Install the CRD into the cluster of ~/.kube/config (or KUBECONFIG).
	"$(KUSTOMIZE)" build config/crd | "$(KUBECTL)" apply -f -

.PHONY: uninstall
uninstall: manifests kustomize ## Remove the CRD from the cluster. ignore-not-found=true ignores missing objects.
	"$(KUSTOMIZE)" build config/crd | "$(KUBECTL)" delete --ignore-not-found=$(ignore-not-found) -f -

.PHONY: deploy
deploy: manifests kustomize ## Deploy the operator (needs cert-manager) to the cluster.
	cd config/manager && "$(KUSTOMIZE)" edit set image controller=${IMG}
	"$(KUSTOMIZE)" build config/default | "$(KUBECTL)" apply -f -

.PHONY: undeploy
undeploy: kustomize ## Remove the operator from the cluster. ignore-not-found=true ignores missing objects.
	"$(KUSTOMIZE)" build config/default | "$(KUBECTL)" delete --ignore-not-found=$(ignore-not-found) -f -

##@ Bundle and catalog

.PHONY: bundle
bundle: manifests kustomize operator-sdk ## Generate the OLM bundle in bundle/ and validate it.
	"$(OPERATOR_SDK)" generate kustomize manifests -q
	cd config/manager && "$(KUSTOMIZE)" edit set image controller=$(IMG)
	"$(KUSTOMIZE)" build config/manifests | "$(OPERATOR_SDK)" generate bundle $(BUNDLE_GEN_FLAGS)
	"$(OPERATOR_SDK)" bundle validate ./bundle

.PHONY: bundle-build
bundle-build: ## Build the bundle image.
	$(CONTAINER_TOOL) build -f bundle.Dockerfile -t $(BUNDLE_IMG) .

.PHONY: bundle-push
bundle-push: ## Push the bundle image.
	$(CONTAINER_TOOL) push $(BUNDLE_IMG)

# BUNDLE_IMGS lists the bundles the catalog holds, comma separated.
BUNDLE_IMGS ?= $(BUNDLE_IMG)

.PHONY: catalog-build
catalog-build: opm ## Build a file-based catalog image holding BUNDLE_IMGS.
	mkdir -p catalog
	"$(OPM)" render $(BUNDLE_IMGS) -o yaml > catalog/memcached-operator.yaml
	"$(OPM)" validate catalog
	"$(OPM)" generate dockerfile catalog
	$(CONTAINER_TOOL) build -f catalog.Dockerfile -t $(CATALOG_IMG) .

.PHONY: catalog-push
catalog-push: ## Push the catalog image.
	$(CONTAINER_TOOL) push $(CATALOG_IMG)

include hack/tools.mk
