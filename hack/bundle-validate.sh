#!/usr/bin/env bash
# `make bundle-validate`, and the last step of `make bundle`: operator-sdk's
# operatorframework suite on BUNDLE_DIR, without its NetworkPolicies.
#
# operator-sdk v1.31 reads bundles with operator-registry v1.28, which does
# not know NetworkPolicy as a bundle object and fails the bundle for it
# ("unsupported media type registry+v1 for bundle object"), while OLM (v0.38,
# catalog operator's supportedKinds) and opm (v1.74) accept it. So the suite
# runs on a copy without them; test/bundle validates the whole bundle,
# NetworkPolicies included, with operator-framework/api's current validators.
set -euo pipefail
: "${OPERATOR_SDK:?}" "${BUNDLE_DIR:?}"

copy=$(mktemp -d)
trap 'rm -rf "$copy"' EXIT
cp -R "$BUNDLE_DIR/." "$copy"
rm -f "$copy"/manifests/*_networking.k8s.io_v1_networkpolicy.yaml

# operator-sdk v1.31's removed-API check takes any rule for events in
# events.k8s.io for the events.k8s.io/v1beta1 API that Kubernetes 1.25
# removed, and two of the suites it runs print that warning. The operator
# records events with events.k8s.io/v1; the newer validators that
# test/bundle runs no longer raise it. It is dropped here, with a note, so
# that a real warning stands out.
false_alarm='this bundle is using APIs which were deprecated and removed in v1.25.*Migrate the API(s) for events: '
if ! out=$("$OPERATOR_SDK" bundle validate "$copy" --select-optional suite=operatorframework 2>&1); then
  echo "$out" >&2
  exit 1
fi
if grep -q "$false_alarm" <<<"$out"; then
  echo "(dropped operator-sdk's warning that the events.k8s.io rule uses a removed API: the operator uses events.k8s.io/v1; see hack/bundle-validate.sh)"
fi
grep -v "$false_alarm" <<<"$out" || true
