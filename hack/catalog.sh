#!/usr/bin/env bash
# `make catalog`: renders CATALOG_BUNDLES into one file-based catalog,
# $CATALOG_DIR/<package>/catalog.yaml, and validates it with opm. The file
# holds the olm.package blob (with the icon), one olm.channel blob per channel
# of CHANNELS, in which each bundle replaces the one before, and the rendered
# olm.bundle blobs. The channel entries are the bundle names `opm render`
# reports (its top-level `name:` lines), in order.
set -euo pipefail
: "${OPM:?}" "${CATALOG_DIR:?}" "${CATALOG_PACKAGE:?}" "${CATALOG_BUNDLES:?}" "${CHANNELS:?}" "${DEFAULT_CHANNEL:?}"
file=$CATALOG_DIR/$CATALOG_PACKAGE/catalog.yaml

rm -rf "$CATALOG_DIR"
mkdir -p "$(dirname "$file")"
# shellcheck disable=SC2046 # one argument per bundle
bundles=$("$OPM" render $(tr ',' ' ' <<<"$CATALOG_BUNDLES") -o yaml)
names=$(sed -n 's/^name: //p' <<<"$bundles")
[[ -n $names ]] || { echo "opm render found no bundle in $CATALOG_BUNDLES" >&2; exit 1; }
{
  "$OPM" init "$CATALOG_PACKAGE" --default-channel="$DEFAULT_CHANNEL" --icon=config/manifests/icon.svg -o yaml
  for channel in $(tr ',' ' ' <<<"$CHANNELS"); do
    printf -- '---\nschema: olm.channel\npackage: %s\nname: %s\nentries:\n' "$CATALOG_PACKAGE" "$channel"
    prev=
    for name in $names; do
      printf -- '- name: %s\n' "$name"
      [[ -z $prev ]] || printf -- '  replaces: %s\n' "$prev"
      prev=$name
    done
  done
  printf '%s\n' "$bundles"
} >"$file"
echo "wrote $file:" $names
"$OPM" validate "$CATALOG_DIR"
