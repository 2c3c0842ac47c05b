#!/usr/bin/env bash
# `make fuzz`: runs every fuzz target of the module for FUZZTIME each, beyond
# its committed corpus (which `make test` always runs), and prints one line
# per target: "fuzz: <package> <target> ok|FAIL".
#
# Fuzzing instruments every package a target imports, so a first run on a
# clean machine compiles them all again (minutes): CI runs the committed
# corpora as tests (make test) and does not fuzz.
#
# Go before 1.27 can fail a target at the end of -fuzztime with a bare
# "context deadline exceeded" when a worker on a loaded machine has not
# stopped yet: a race in the fuzzing coordinator (golang/go#75804), not a
# finding. A finding always writes its input under testdata/fuzz, so a run
# that failed so without writing one is repeated once; anything else fails.
set -euo pipefail
packages=$(grep -rl --include='*_test.go' '^func Fuzz' . | xargs -n1 dirname | sort -u)
: "${FUZZTIME:?}"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
failed=0
for pkg in $packages; do
  for target in $(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' "$pkg"/*_test.go); do
    result=FAIL
    for attempt in 1 2; do
      if go -C "$pkg" test . -run '^$' -fuzz "^$target\$" -fuzztime "$FUZZTIME" 2>&1 | tee "$log"; then
        result=ok
        break
      fi
      if [ "$attempt" = 1 ] && grep -q 'context deadline exceeded' "$log" && ! grep -q 'Failing input written to' "$log"; then
        echo "fuzz: $pkg $target stopped on the coordinator's deadline race (golang/go#75804), no input written: once more"
        continue
      fi
      break
    done
    echo "fuzz: $pkg $target $result"
    [ "$result" = ok ] || failed=1
  done
done
exit $failed
