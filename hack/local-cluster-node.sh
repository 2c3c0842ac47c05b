#!/usr/bin/env bash
# Chooses the local cluster's node for `make run` and `make local-cluster`:
# prints `real` or `kwok`, a space, and why, on one line.
#
# LOCAL_CLUSTER_NODE=real or kwok is taken as it is. Otherwise (auto, the
# default) the cluster gets the real node wherever it can run: a person who
# runs `make run` and then connects to a memcached pod should find memcached,
# not a pod that kwok only marked Ready. It cannot run without root, off
# Linux, without the Debian packages or apt to install them, or while another
# cluster's real node holds the machine (there is one per machine); kwok's
# fake node then runs the pods, and the reason says what to change.
#
# The packages to check are the arguments (make passes NODE_PACKAGES).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
dir=${LOCAL_CLUSTER_DIR:-$root/.local-cluster}
# Written by local-cluster.sh when it starts a cluster: the node it has.
mode_file=$dir/node-kind
lock=/run/localcluster-node.lock

# A running cluster keeps the node it started with, whatever is asked.
if [[ -f $dir/pid ]] && kill -0 "$(cat "$dir/pid")" 2>/dev/null && [[ -s $mode_file ]]; then
  echo "$(cat "$mode_file") the local cluster in $dir runs already with this node (make local-cluster-down, then start it again, to choose anew)"
  exit 0
fi

case ${LOCAL_CLUSTER_NODE:-auto} in
  real | kwok)
    echo "$LOCAL_CLUSTER_NODE LOCAL_CLUSTER_NODE=$LOCAL_CLUSTER_NODE"
    exit 0
    ;;
  auto) ;;
  *)
    # make ignores a $(shell) failure: this line becomes its error.
    echo "LOCAL_CLUSTER_NODE must be auto, real or kwok, not '$LOCAL_CLUSTER_NODE'" >&2
    exit 2
    ;;
esac

if [[ $(uname -s) != Linux ]]; then
  echo "kwok this is not Linux: the real node's kubelet, containerd and runc run on Linux only"
  exit 0
fi
if ((EUID != 0)); then
  echo "kwok not root: the real node's kubelet and containerd need root (run make as root for memcached pods that serve)"
  exit 0
fi
missing=()
for pkg in "$@"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
done
if ((${#missing[@]} > 0)) && ! command -v apt-get >/dev/null; then
  echo "kwok the real node's packages (${missing[*]}) are not installed and there is no apt-get to install them"
  exit 0
fi
# The node lock is held while a real node runs (hack/local-cluster/localcluster):
# one per machine. A lock no one holds is free, whatever it still says.
if [[ -e $lock ]] && ! flock -n "$lock" true; then
  echo "kwok another local cluster's real node runs on this machine ($(tr -d '\n' <"$lock")); there is one per machine"
  exit 0
fi
echo "real running as root on Linux (LOCAL_CLUSTER_NODE=kwok gives fake pods instead)"
