# GOFIPS140 is the Go Cryptographic Module the binaries are built with
# (docs/fips.md): `make docker-build` passes the Makefile's; this default is
# the same (hack/local-cluster/images checks it).
ARG GOFIPS140=v1.0.0

# Build the manager binary.
FROM golang:1.26 AS builder
ARG TARGETOS
ARG TARGETARCH
ARG GOFIPS140

WORKDIR /workspace
# Download modules first, in their own layer, so that source changes do not
# invalidate it.
COPY go.mod go.mod
COPY go.sum go.sum
RUN go mod download

# The Go source. Only these paths get past .dockerignore; add a package
# directory to both files when you create one.
COPY *.go ./
COPY api/ api/
COPY controllers/ controllers/
COPY webhooks/ webhooks/
COPY certs/ certs/
COPY cmd/ cmd/

# TARGETARCH has no default so that, without buildx, the binary matches the
# host that builds it; buildx sets both for each --platform.
RUN CGO_ENABLED=0 GOOS=${TARGETOS:-linux} GOARCH=${TARGETARCH} GOFIPS140=${GOFIPS140} \
    go build -trimpath -ldflags "-s -w" -o manager .

# The sidecar of memcached pods that serve TLS (cmd/tls-reloader), built
# from the same sources in a stage of its own, so that building the
# operator image does not build it.
FROM builder AS tls-reloader-builder
ARG GOFIPS140
RUN CGO_ENABLED=0 GOOS=${TARGETOS:-linux} GOARCH=${TARGETARCH} GOFIPS140=${GOFIPS140} \
    go build -trimpath -ldflags "-s -w" -o tls-reloader ./cmd/tls-reloader

# The sidecar's image: `docker build --target tls-reloader`. It is
# versioned apart from the operator (TLS_RELOADER_VERSION in the
# Makefile), so that an operator upgrade leaves memcached pods alone.
FROM gcr.io/distroless/static:nonroot AS tls-reloader
# The sidecar's version (make docker-build passes the Makefile's).
ARG TLS_RELOADER_VERSION
# name to maintainer are the labels Red Hat's certification (preflight's
# HasRequiredLabel) requires; release counts the builds of one version.
LABEL name="memcached-tls-reloader" \
      vendor="Example Inc" \
      version="${TLS_RELOADER_VERSION}" \
      release="1" \
      maintainer="Memcached Operator maintainers <memcached-operator@example.com>" \
      summary="Refreshes memcached's TLS certificate when its Secret changes" \
      description="Runs in memcached pods that serve TLS: checks the mounted Secret, tells memcached to load it again with refresh_certs on loopback, and answers memcached's readiness probe." \
      io.k8s.display-name="Memcached TLS Reloader" \
      io.openshift.tags="memcached,cache,tls"
WORKDIR /
COPY --from=tls-reloader-builder /workspace/tls-reloader .
# The license, where Red Hat's certification looks for it.
COPY LICENSE /licenses/LICENSE
USER 65532:65532
# /readyz, for memcached's readiness probe.
EXPOSE 11213
ENTRYPOINT ["/tls-reloader"]

# The operator's image, the final stage, so that a plain `docker build`
# makes it. A minimal, non-root runtime image: no shell, no package
# manager. See https://github.com/GoogleContainerTools/distroless.
FROM gcr.io/distroless/static:nonroot
# The operator's version (make docker-build passes the Makefile's).
ARG VERSION
LABEL name="memcached-operator" \
      vendor="Example Inc" \
      version="${VERSION}" \
      release="1" \
      maintainer="Memcached Operator maintainers <memcached-operator@example.com>" \
      summary="Runs memcached on Kubernetes and OpenShift" \
      description="Reconciles Memcached objects (cache.example.com/v1) into memcached Deployments, Services and PodDisruptionBudgets, with admission webhooks for their spec." \
      io.k8s.display-name="Memcached Operator" \
      io.openshift.tags="memcached,cache,operator"
WORKDIR /
COPY --from=builder /workspace/manager .
COPY LICENSE /licenses/LICENSE
USER 65532:65532
# Health probes, metrics (HTTPS) and the admission webhooks, as
# config/manager and config/default use them.
EXPOSE 8081 8443 9443

ENTRYPOINT ["/manager"]
