#!/usr/bin/env bash
# `make node-packages`: installs the Debian packages the local cluster's real
# node needs (the arguments), if any is missing. Needs root and apt.
#
# Installing a package with a service (memcached) must not start it: the
# memcached the tests run is in a pod. A policy-rc.d that forbids every
# start is in place for the duration of the install (many machines, like
# Debian's container images, have one already; another one is put back).
set -euo pipefail
missing=()
for pkg in "$@"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
done
if ((${#missing[@]} == 0)); then
  echo "node packages installed: $*"
  exit 0
fi
if ((EUID != 0)); then
  echo "missing Debian packages ${missing[*]}: run make node-packages as root (the real node needs root anyway)" >&2
  exit 1
fi
policy=/usr/sbin/policy-rc.d
if [[ ! -e $policy ]] || ! grep -qx 'exit 101' "$policy"; then
  backup=
  if [[ -e $policy ]]; then
    backup=$(mktemp)
    mv "$policy" "$backup"
  fi
  trap 'rm -f "$policy"; if [[ -n $backup ]]; then mv "$backup" "$policy"; fi' EXIT
  printf '#!/bin/sh\nexit 101\n' >"$policy"
  chmod +x "$policy"
fi
echo "installing ${missing[*]}"
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
