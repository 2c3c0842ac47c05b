#!/usr/bin/env bash
# `make bundle`: regenerates bundle/ and bundle.Dockerfile from config/ for IMG
# and VERSION, and validates them. The Makefile passes every variable below.
#
# The build runs on a throwaway copy of config/manifests (a sibling, so its
# ../default still resolves) in which `kustomize edit set image` sets IMG: the
# committed kustomization is never rewritten. operator-sdk's relatedImages hold
# only the RELATED_IMAGE_* images; with tags (no USE_IMAGE_DIGESTS) the
# operator image is added here. With digests, operator-sdk lists every image
# itself.
set -euo pipefail
: "${OPERATOR_SDK:?}" "${KUSTOMIZE:?}" "${IMG:?}" "${BUNDLE_DIR:?}" "${BUNDLE_GEN_FLAGS:?}" "${BUNDLE_CREATED_AT:?}"
: "${USE_IMAGE_DIGESTS:=false}"
csv=$BUNDLE_DIR/manifests/memcached-operator.clusterserviceversion.yaml
# The webhook Service of config/webhook: operator-sdk needs it to fill in the
# webhookdefinitions' ports, but OLM creates its own Service for them
# (<deploymentName>-service), so the bundle leaves this one out.
webhook_service=$BUNDLE_DIR/manifests/memcached-operator-webhook-service_v1_service.yaml

"$OPERATOR_SDK" generate kustomize manifests -q --interactive=false

tmp=$(mktemp -d config/.bundle-manifests.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cp -R config/manifests/. "$tmp"
(cd "$tmp" && "$KUSTOMIZE" edit set image "controller=$IMG")
rm -rf "$BUNDLE_DIR/manifests" "$BUNDLE_DIR/metadata" "$BUNDLE_DIR/tests"
echo "kustomize build config/manifests (IMG=$IMG) | operator-sdk generate bundle $BUNDLE_GEN_FLAGS"
# shellcheck disable=SC2086 # BUNDLE_GEN_FLAGS is a list of flags
"$KUSTOMIZE" build "$tmp" | "$OPERATOR_SDK" generate bundle $BUNDLE_GEN_FLAGS
rm -f "$webhook_service"

# operator-sdk writes the current time; a fixed value makes the bundle
# reproducible.
sed -i "s|^    createdAt: .*|    createdAt: \"$BUNDLE_CREATED_AT\"|" "$csv"
grep -qx "    createdAt: \"$BUNDLE_CREATED_AT\"" "$csv" || { echo "$csv: createdAt not set" >&2; exit 1; }
if [[ $USE_IMAGE_DIGESTS != true ]]; then
  grep -qx '  relatedImages:' "$csv" || { echo "$csv: no relatedImages to add the operator image to" >&2; exit 1; }
  sed -i "/^  relatedImages:\$/a\\  - image: $IMG\\n    name: memcached-operator" "$csv"
fi

# operator-sdk v1.31's removed-API check takes any rule for events in
# events.k8s.io for the events.k8s.io/v1beta1 API that Kubernetes 1.25
# removed, and two of the suites it runs print that warning. The operator
# records events with events.k8s.io/v1; the newer validators that
# test/bundle runs no longer raise it. It is dropped here, with a note, so
# that a real warning stands out.
false_alarm='this bundle is using APIs which were deprecated and removed in v1.25.*Migrate the API(s) for events: '
if ! out=$("$OPERATOR_SDK" bundle validate "./$BUNDLE_DIR" --select-optional suite=operatorframework 2>&1); then
  echo "$out" >&2
  exit 1
fi
if grep -q "$false_alarm" <<<"$out"; then
  echo "(dropped operator-sdk's warning that the events.k8s.io rule uses a removed API: the operator uses events.k8s.io/v1; see hack/bundle.sh)"
fi
grep -v "$false_alarm" <<<"$out" || true
