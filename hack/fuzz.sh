#!/usr/bin/env bash
# `make fuzz`: runs every fuzz target of the module for FUZZTIME each, beyond
# its committed corpus (which `make test` always runs), and prints one line
# per target: "fuzz: <package> <target> ok|FAIL".
set -euo pipefail
: "${FUZZTIME:?}"
failed=0
for pkg in $(grep -rl --include='*_test.go' '^func Fuzz' . | xargs -n1 dirname | sort -u); do
  for target in $(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' "$pkg"/*_test.go); do
    if go test "$pkg" -run '^$' -fuzz "^$target\$" -fuzztime "$FUZZTIME"; then
      echo "fuzz: $pkg $target ok"
    else
      echo "fuzz: $pkg $target FAIL"
      failed=1
    fi
  done
done
exit $failed
