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

# Unit and integration suites. The suites that run a whole local cluster have
# targets of their own: test-e2e, test-faults and test-olm.
E2E_PACKAGES = ./test/localcluster/... ./test/e2e/...
FAULT_PACKAGES = ./test/faults/... ./test/security/...
OLM_PACKAGES = ./test/olm/...
TEST_PACKAGES = $$(go list ./... | grep -v -e /test/localcluster -e /test/e2e -e /test/faults -e /test/security -e /test/olm)

.PHONY: test
test: manifests generate fmt vet control-plane ## Run the unit and integration tests against the built control plane.
	KUBEBUILDER_ASSETS="$(CONTROL_PLANE_DIR)" go test $(TEST_PACKAGES) -coverprofile cover.out

.PHONY: test-e2e
test-e2e: manifests generate control-plane kustomize ## Run the end-to-end tests on a local cluster (etcd, apiserver, kcm, scheduler, kwok).
	KUBEBUILDER_ASSETS="$(CONTROL_PLANE_DIR)" go test $(E2E_PACKAGES) -timeout 30m

.PHONY: test-faults
test-faults: manifests generate control-plane kustomize ## Fault, bad-input and security tests on a local cluster (operator crashes, API server and etcd restarts, leader failover).
	KUBEBUILDER_ASSETS="$(CONTROL_PLANE_DIR)" go test $(FAULT_PACKAGES) -count=1 -timeout 40m $(FAULT_ARGS)

# OLM_ARGS adds go test flags to test-olm ("-v -ginkgo.v" prints its steps and timings).
.PHONY: test-olm
test-olm: manifests generate control-plane olm opm ## Install the committed bundle through a real OLM Subscription on a local cluster, with the cluster proxy, and upgrade it.
	KUBEBUILDER_ASSETS="$(CONTROL_PLANE_DIR)" OLM_BIN_DIR="$(abspath $(OLM_BIN_DIR))" OLM_CRDS_DIR="$(OLM_CRDS_DIR)" OPM="$(abspath $(OPM))" \
		OPENSHIFT_PROXY_CRD="$(OPENSHIFT_PROXY_CRD)" go test $(OLM_PACKAGES) -count=1 -timeout 30m $(OLM_ARGS)

# FUZZTIME is how long `make fuzz` runs each fuzz target.
FUZZTIME ?= 15s

.PHONY: fuzz
fuzz: ## Run every fuzz target for FUZZTIME each (the committed corpora always run in make test).
	@set -e; for pkg in $$(grep -rl --include='*_test.go' '^func Fuzz' . | xargs -n1 dirname | sort -u); do \
	  for target in $$(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' "$$pkg"/*_test.go); do \
	    echo "fuzz $$pkg $$target ($(FUZZTIME))"; \
	    go test "$$pkg" -run '^$$' -fuzz "^$$target$$" -fuzztime $(FUZZTIME); \
	  done; \
	done

.PHONY: bench
bench: control-plane ## Benchmarks on a local cluster: N=1000 Memcached, 10k unrelated pods (~14 min); writes docs/bench.
	KUBEBUILDER_ASSETS="$(CONTROL_PLANE_DIR)" go run ./test/bench -n 1000 $(BENCH_ARGS)

.PHONY: bench-smoke
bench-smoke: control-plane ## Every benchmark scenario at N=20 (~70 s); checks only that each completes.
	KUBEBUILDER_ASSETS="$(CONTROL_PLANE_DIR)" go run ./test/bench -smoke

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

# BUNDLE_CREATED_AT is the CSV's createdAt annotation: the release date of
# VERSION. operator-sdk writes the current time; a fixed value makes
# `make bundle` reproducible. Set it when you bump VERSION.
BUNDLE_CREATED_AT ?= 2026-11-30T00:00:00Z

BUNDLE_DIR := bundle
BUNDLE_CSV := $(BUNDLE_DIR)/manifests/memcached-operator.clusterserviceversion.yaml
# The webhook Service of config/webhook: operator-sdk needs it to fill in the
# webhookdefinitions' ports, but OLM creates its own Service for them
# (<deploymentName>-service), so the bundle leaves this one out.
BUNDLE_WEBHOOK_SERVICE := $(BUNDLE_DIR)/manifests/memcached-operator-webhook-service_v1_service.yaml

# The build runs on a throwaway copy of config/manifests (a sibling, so its
# ../default still resolves) in which `kustomize edit set image` sets IMG: the
# committed kustomization is never rewritten. operator-sdk's relatedImages
# hold only the RELATED_IMAGE_* images; with tags (no USE_IMAGE_DIGESTS) the
# operator image is added here. With digests, operator-sdk lists every image
# itself.
.PHONY: bundle
bundle: manifests kustomize operator-sdk ## Regenerate bundle/ and bundle.Dockerfile from config/ for IMG and VERSION, and validate them.
	"$(OPERATOR_SDK)" generate kustomize manifests -q --interactive=false
	@set -e; tmp="$$(mktemp -d config/.bundle-manifests.XXXXXX)"; trap 'rm -rf "$$tmp"' EXIT; \
	cp -R config/manifests/. "$$tmp"; \
	(cd "$$tmp" && "$(KUSTOMIZE)" edit set image controller=$(IMG)); \
	rm -rf $(BUNDLE_DIR)/manifests $(BUNDLE_DIR)/metadata $(BUNDLE_DIR)/tests; \
	echo "kustomize build config/manifests (IMG=$(IMG)) | operator-sdk generate bundle $(BUNDLE_GEN_FLAGS)"; \
	"$(KUSTOMIZE)" build "$$tmp" | "$(OPERATOR_SDK)" generate bundle $(BUNDLE_GEN_FLAGS)
	rm -f $(BUNDLE_WEBHOOK_SERVICE)
	sed -i 's|^    createdAt: .*|    createdAt: "$(BUNDLE_CREATED_AT)"|' $(BUNDLE_CSV)
	@grep -qx '    createdAt: "$(BUNDLE_CREATED_AT)"' $(BUNDLE_CSV) || { echo "$(BUNDLE_CSV): createdAt not set" >&2; exit 1; }
ifneq ($(USE_IMAGE_DIGESTS), true)
	@grep -qx '  relatedImages:' $(BUNDLE_CSV) || { echo "$(BUNDLE_CSV): no relatedImages to add the operator image to" >&2; exit 1; }
	sed -i '/^  relatedImages:$$/a\  - image: $(IMG)\n    name: memcached-operator' $(BUNDLE_CSV)
endif
	"$(OPERATOR_SDK)" bundle validate ./$(BUNDLE_DIR) --select-optional suite=operatorframework

.PHONY: bundle-validate
bundle-validate: operator-sdk ## Validate the committed bundle/ with operator-sdk's operatorframework suite (no regeneration).
	"$(OPERATOR_SDK)" bundle validate ./$(BUNDLE_DIR) --select-optional suite=operatorframework

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
CATALOG_FILE = $(CATALOG_DIR)/$(CATALOG_PACKAGE)/catalog.yaml

# One catalog.yaml: the olm.package blob (with the icon), one olm.channel blob
# per channel and the rendered olm.bundle blobs. The channel entries are the
# bundle names `opm render` reports (its top-level `name:` lines), in order.
.PHONY: catalog
catalog: opm ## Render CATALOG_BUNDLES (default bundle/, offline) into a file-based catalog in catalog/ and validate it with opm.
	@set -e; rm -rf "$(CATALOG_DIR)"; mkdir -p "$(dir $(CATALOG_FILE))"; \
	bundles="$$("$(OPM)" render $$(echo "$(CATALOG_BUNDLES)" | tr ',' ' ') -o yaml)"; \
	names="$$(printf '%s\n' "$$bundles" | sed -n 's/^name: //p')"; \
	[ -n "$$names" ] || { echo "opm render found no bundle in $(CATALOG_BUNDLES)" >&2; exit 1; }; \
	{ "$(OPM)" init $(CATALOG_PACKAGE) --default-channel=$(DEFAULT_CHANNEL) --icon=config/manifests/icon.svg -o yaml; \
	  for channel in $$(echo "$(CHANNELS)" | tr ',' ' '); do \
	    printf -- '---\nschema: olm.channel\npackage: %s\nname: %s\nentries:\n' $(CATALOG_PACKAGE) "$$channel"; \
	    prev=; for name in $$names; do \
	      printf -- '- name: %s\n' "$$name"; [ -z "$$prev" ] || printf -- '  replaces: %s\n' "$$prev"; prev="$$name"; \
	    done; \
	  done; \
	  printf '%s\n' "$$bundles"; \
	} > "$(CATALOG_FILE)"; \
	echo "wrote $(CATALOG_FILE): $$(echo $$names)"
	"$(OPM)" validate "$(CATALOG_DIR)"

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
