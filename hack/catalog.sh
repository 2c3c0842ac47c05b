#!/usr/bin/env bash
# `make catalog`: renders CATALOG_BUNDLES into one file-based catalog,
# $CATALOG_DIR/<package>/catalog.yaml, and validates it with opm. The file
# holds the olm.package blob (with the icon), one olm.channel blob per channel
# of CHANNELS holding every bundle, and the rendered olm.bundle blobs. Each
# channel entry carries the replaces and olm.skipRange its bundle's CSV
# declares (hack/catalogchannels, which refuses bundles in which one does
# not replace the one before).
set -euo pipefail
: "${OPM:?}" "${CATALOG_DIR:?}" "${CATALOG_PACKAGE:?}" "${CATALOG_BUNDLES:?}" "${CHANNELS:?}" "${DEFAULT_CHANNEL:?}"
file=$CATALOG_DIR/$CATALOG_PACKAGE/catalog.yaml

rm -rf "$CATALOG_DIR"
mkdir -p "$(dirname "$file")"
# shellcheck disable=SC2046 # one argument per bundle
bundles=$("$OPM" render $(tr ',' ' ' <<<"$CATALOG_BUNDLES") -o yaml)
channels=$(go run ./hack/catalogchannels -package "$CATALOG_PACKAGE" -channels "$CHANNELS" <<<"$bundles")
{
  "$OPM" init "$CATALOG_PACKAGE" --default-channel="$DEFAULT_CHANNEL" --icon=config/manifests/icon.svg -o yaml
  printf '%s\n' "$channels" "$bundles"
} >"$file"
echo "wrote $file:" $(sed -n 's/^name: //p' <<<"$bundles")
"$OPM" validate "$CATALOG_DIR"
