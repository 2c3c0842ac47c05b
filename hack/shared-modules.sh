#!/usr/bin/env bash
# Fails when a module that gives packages to two of the project's modules
# (the operator's, hack/local-cluster, test) resolves to two versions, or
# one that gives packages both to the project's build (its commands and
# tests) and to the tools built from a wrapper module
# (hack/tools/kubernetes: the control plane, etcd, kwok, the real node, OLM;
# hack/tools/containerd) resolves to two versions. Go compiles a package once
# for every distinct set of inputs: a module at two versions is compiled
# twice, and so is every package above it, which on a clean machine is
# minutes of CI.
set -euo pipefail
cd "$(dirname "$0")/.."
export GOTOOLCHAIN=local GOFLAGS=-mod=mod

# Module path and the version built (a replacement's, where there is one),
# of every package a build compiles.
modules() {
  go list -deps -f '{{with .Module}}{{.Path}} {{with .Replace}}{{.Version}}{{else}}{{.Version}}{{end}}{{end}}' "$@" | sort -u
}

# The commands a wrapper module's tools.go pins, and the packages of its own.
wrapper() {
  (cd "hack/tools/$1" && modules -tags 'no_btrfs json1 containers_image_openpgp' \
    $(go list -e -tags tools -f '{{join .Imports " "}}' .) $(go list -e ./... 2>/dev/null))
}

rc=0
# "path version" per project module, then the paths listed at two versions.
project=$(for m in . hack/local-cluster test; do (cd "$m" && modules -test ./...); done | sort -u)
differ=$(echo "$project" | awk '{ n[$1]++ } n[$1] == 2 { print $1 }')
if [[ -n $differ ]]; then
  rc=1
  echo "the project's modules (., hack/local-cluster, test) build these modules at different versions:" >&2
  for path in $differ; do
    echo "  $path:" $(for m in . hack/local-cluster test; do (cd "$m" && go list -m -f "$m {{.Version}}" "$path" 2>/dev/null); done) >&2
  done
fi
for w in kubernetes containerd; do
  # join on the module path: "path project-version wrapper-version".
  differ=$(join <(echo "$project") <(wrapper "$w") | awk '$2 != $3')
  [[ -z $differ ]] && continue
  rc=1
  echo "the project and hack/tools/$w build these modules at different versions:" >&2
  echo "$differ" | awk -v w="$w" '{ printf "  %s: go.mod %s, hack/tools/%s %s\n", $1, $2, w, $3 }' >&2
done
[[ $rc == 0 ]] || echo "raise the lower side: go get <module>@<version> in the repository's root or in the wrapper module" >&2
exit $rc
