#!/usr/bin/env bash
# `make bundle`: regenerates bundle/ and bundle.Dockerfile from config/ for IMG
# and VERSION, and validates them (hack/bundle-validate.sh). The Makefile passes every variable below.
#
# The build runs on a throwaway copy of config/manifests (a sibling, so its
# ../default still resolves) in which `kustomize edit set image` sets IMG: the
# committed kustomization is never rewritten. operator-sdk's relatedImages hold
# only the RELATED_IMAGE_* images; with tags (no USE_IMAGE_DIGESTS) the
# operator image is added here. With digests, operator-sdk lists every image
# itself.
set -euo pipefail
: "${OPERATOR_SDK:?}" "${KUSTOMIZE:?}" "${IMG:?}" "${BUNDLE_DIR:?}" "${BUNDLE_GEN_FLAGS:?}" "${BUNDLE_CREATED_AT:?}" "${OPENSHIFT_VERSIONS:?}" "${VERSION:?}"
: "${USE_IMAGE_DIGESTS:=false}" "${PREVIOUS_VERSION:=}"
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

# OpenShift offers a bundle only to the releases its
# com.redhat.openshift.versions names, read from the bundle metadata and the
# image label; operator-sdk writes neither. test/bundle checks the value
# against the CSV's minKubeVersion.
annotations=$BUNDLE_DIR/metadata/annotations.yaml
printf '\n  # OpenShift releases the bundle is offered to.\n  %s: %s\n' \
  com.redhat.openshift.versions "$OPENSHIFT_VERSIONS" >>"$annotations"
label="LABEL com.redhat.openshift.versions=$OPENSHIFT_VERSIONS"
sed -i "/^# Copy files to locations specified by labels\.\$/i\\# OpenShift releases the bundle is offered to.\n$label\n" bundle.Dockerfile
grep -qx "$label" bundle.Dockerfile || { echo "bundle.Dockerfile: $label not added" >&2; exit 1; }

# operator-sdk writes the current time; a fixed value makes the bundle
# reproducible.
sed -i "s|^    createdAt: .*|    createdAt: \"$BUNDLE_CREATED_AT\"|" "$csv"
grep -qx "    createdAt: \"$BUNDLE_CREATED_AT\"" "$csv" || { echo "$csv: createdAt not set" >&2; exit 1; }
# The upgrade edges, as OLM documents them: spec.replaces names the release
# before (so a Subscription steps through each one, and older releases stay
# installable with startingCSV), and olm.skipRange lets any older version
# upgrade straight here. operator-sdk writes neither; make catalog copies
# both into the channel entries.
skip_range=">=0.0.0 <$VERSION"
# (In the annotations' alphabetical place, as operator-sdk sorts them.)
sed -i "/^    operatorframework\.io\/suggested-namespace: /i\    olm.skipRange: '$skip_range'" "$csv"
grep -qx "    olm.skipRange: '$skip_range'" "$csv" || { echo "$csv: olm.skipRange not set" >&2; exit 1; }
if [[ -n $PREVIOUS_VERSION ]]; then
  sed -i "/^  version: /i\  replaces: memcached-operator.v$PREVIOUS_VERSION" "$csv"
  grep -qx "  replaces: memcached-operator.v$PREVIOUS_VERSION" "$csv" || { echo "$csv: replaces not set" >&2; exit 1; }
fi
if [[ $USE_IMAGE_DIGESTS != true ]]; then
  grep -qx '  relatedImages:' "$csv" || { echo "$csv: no relatedImages to add the operator image to" >&2; exit 1; }
  sed -i "/^  relatedImages:\$/a\\  - image: $IMG\\n    name: memcached-operator" "$csv"
fi

# The objects operator-sdk v1.31 cannot write (config/bundle-objects says
# why), one file each, named as operator-sdk names its own:
# <name>_<group>_<version>_<kind>.yaml.
objects=$tmp/.bundle-objects
mkdir "$objects"
"$KUSTOMIZE" build config/bundle-objects -o "$objects"
for f in "$objects"/*.yaml; do
  # kustomize names each <group>_<version>_<kind>_<name>.yaml; Kubernetes
  # names hold no underscore.
  IFS=_ read -r group version kind name <<<"$(basename "$f" .yaml)"
  mv "$f" "$BUNDLE_DIR/manifests/${name}_${group}_${version}_${kind}.yaml"
done

OPERATOR_SDK="$OPERATOR_SDK" BUNDLE_DIR="$BUNDLE_DIR" hack/bundle-validate.sh
