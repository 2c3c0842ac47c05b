#!/usr/bin/env bash
# `make bundle`: regenerates bundle/ and bundle.Dockerfile from config/ for IMG
# and VERSION, and validates them (hack/bundle-validate.sh). The Makefile passes every variable below.
#
# The build runs on a throwaway copy of config/manifests (a sibling, so its
# ../default still resolves) in which `kustomize edit set image` sets IMG: the
# committed kustomization is never rewritten. operator-sdk's relatedImages hold
# only the RELATED_IMAGE_* images; the operator image is added here.
#
# USE_IMAGE_DIGESTS=true (a release) pins IMG and every RELATED_IMAGE_* value to
# the digest its tag names now, resolved with crane against the registry the
# reference names (`crane digest`: a HEAD of the manifest; the images must be
# pushed), before operator-sdk sees them. The release bundle is then the
# development bundle with each image reference replaced, nothing else.
# operator-sdk's own --use-image-digests (operator-manifest-tools v0.2.x) is
# not used: it rewrites anything in the CSV that looks like an image
# reference (a description naming one turned the whole spec into a string),
# lists each image again under derived names (manager, tls_reloader,
# <name>-<digest>-annotation) and in random order, so its bundle is neither
# clean nor reproducible.
set -euo pipefail
: "${OPERATOR_SDK:?}" "${KUSTOMIZE:?}" "${IMG:?}" "${BUNDLE_DIR:?}" "${BUNDLE_GEN_FLAGS:?}" "${BUNDLE_CREATED_AT:?}" "${OPENSHIFT_VERSIONS:?}" "${VERSION:?}"
: "${USE_IMAGE_DIGESTS:=false}" "${PREVIOUS_VERSION:=}"
if [[ $USE_IMAGE_DIGESTS == true ]]; then : "${CRANE:?}"; fi
csv=$BUNDLE_DIR/manifests/memcached-operator.clusterserviceversion.yaml
# The webhook Service of config/webhook: operator-sdk needs it to fill in the
# webhookdefinitions' ports, but OLM creates its own Service for them
# (<deploymentName>-service), so the bundle leaves this one out.
webhook_service=$BUNDLE_DIR/manifests/memcached-operator-webhook-service_v1_service.yaml

"$OPERATOR_SDK" generate kustomize manifests -q --interactive=false

# pin prints ref as <repository>@<digest>, the digest its registry serves for
# it now.
pin() {
  local ref=$1 repository=${1%@*} digest
  # A tag follows the last ':' of the last path element (a port sits in the
  # first).
  if [[ ${repository##*/} == *:* ]]; then repository=${repository%:*}; fi
  digest=$("$CRANE" digest "$ref") || { echo "cannot resolve $ref to a digest: push the images first" >&2; return 1; }
  printf '%s@%s\n' "$repository" "$digest"
}

tmp=$(mktemp -d config/.bundle-manifests.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cp -R config/manifests/. "$tmp"
img=$IMG
if [[ $USE_IMAGE_DIGESTS == true ]]; then img=$(pin "$IMG"); fi
(cd "$tmp" && "$KUSTOMIZE" edit set image "controller=$img")
built=$tmp/.built.yaml
"$KUSTOMIZE" build "$tmp" >"$built"
if [[ $USE_IMAGE_DIGESTS == true ]]; then
  # The value of every RELATED_IMAGE_* variable (the line after its name, as
  # kustomize sorts the keys), then each replaced by its pinned reference.
  related=$(awk '/^ *- name: RELATED_IMAGE_/ {
    if ((getline line) > 0 && line ~ /^ *value: /) { sub(/^ *value: /, "", line); print line }
    else { print "a RELATED_IMAGE_* variable without a value: " $0 > "/dev/stderr"; exit 1 } }' "$built")
  pins=$tmp/.pins
  : >"$pins"
  for ref in $related; do
    pinned=$(pin "$ref") # an assignment, so that a failed lookup stops the script
    printf '%s %s\n' "$ref" "$pinned" >>"$pins"
  done
  awk 'NR == FNR { pin[$1] = $2; next }
    prev ~ /^ *- name: RELATED_IMAGE_/ && match($0, /^ *value: /) {
      v = substr($0, RLENGTH + 1); if (v in pin) $0 = substr($0, 1, RLENGTH) pin[v] }
    { prev = $0; print }' "$pins" "$built" >"$built.pinned"
  mv "$built.pinned" "$built"
fi
rm -rf "$BUNDLE_DIR/manifests" "$BUNDLE_DIR/metadata" "$BUNDLE_DIR/tests"
echo "kustomize build config/manifests (IMG=$img) | operator-sdk generate bundle $BUNDLE_GEN_FLAGS"
# operator-sdk reads its input from stdin only when stdin is a pipe.
# shellcheck disable=SC2086,SC2002 # BUNDLE_GEN_FLAGS is a list of flags
cat "$built" | "$OPERATOR_SDK" generate bundle $BUNDLE_GEN_FLAGS
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
grep -qx '  relatedImages:' "$csv" || { echo "$csv: no relatedImages to add the operator image to" >&2; exit 1; }
sed -i "/^  relatedImages:\$/a\\  - image: $img\\n    name: memcached-operator" "$csv"
if [[ $USE_IMAGE_DIGESTS == true ]] && grep -nE '^ *(- )?(image|containerImage): ' "$csv" | grep -v '@sha256:'; then
  echo "$csv: the images above are not pinned by digest" >&2
  exit 1
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
