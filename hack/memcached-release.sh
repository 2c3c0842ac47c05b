#!/usr/bin/env bash
# `make memcached-release`: unpacks Debian trixie's memcached package
# (version $1, the release the operator ships) and the libraries it loads
# into the root filesystem $2, from Debian's archive with an apt
# configuration of its own: the host's apt, packages and lists are not
# touched. Tests run that memcached through the
# root's own dynamic loader; the real node's image is built from the root.
set -euo pipefail
version=$1 root=$2
# memcached's libraries and theirs; the package's other dependencies
# (adduser, perl, lsb-base) are for its service scripts, which a container
# does not run.
packages=(libc6 libgcc-s1 libevent-2.1-7t64 libsasl2-2 libsasl2-modules-db libdb5.3t64 libssl3t64 libzstd1 zlib1g)
work=$(mktemp -d "$root.tmp.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work"/{lists/partial,cache/archives/partial,debs,root}
echo "deb http://deb.debian.org/debian trixie main" >"$work/sources.list"
touch "$work/status"
apt_opts=(-o "Dir::Etc::SourceList=$work/sources.list" -o Dir::Etc::SourceParts=/dev/null
  -o "Dir::State::Lists=$work/lists" -o "Dir::Cache=$work/cache" -o "Dir::State::status=$work/status"
  -o APT::Architecture=amd64 -o Debug::NoLocking=1 -o APT::Sandbox::User=root -qq)
echo "Fetching Debian trixie's memcached $version into $root"
apt-get "${apt_opts[@]}" update
(cd "$work/debs" && apt-get "${apt_opts[@]}" download "memcached=$version" "${packages[@]}")
for deb in "$work"/debs/*.deb; do
  dpkg-deb -x "$deb" "$work/root"
done
# What the packages' names promise: the binary says the version.
"$work/root/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2" --library-path "$work/root/usr/lib/x86_64-linux-gnu" \
  "$work/root/usr/bin/memcached" --version | grep -qx "memcached ${version%%-*}"
rm -rf "$root"
mv "$work/root" "$root"
