#!/usr/bin/env bash
# Starts (up) or stops (down) the local cluster of hack/local-cluster/localcluster
# in the background, for `make local-cluster`, `make local-cluster-down` and
# `make run`. The cluster's files, logs and kubeconfig live in
# $LOCAL_CLUSTER_DIR (default .local-cluster), where the cluster's objects
# outlive a stop and start; LOCAL_CLUSTER_FRESH=true starts an empty one.
# LOCAL_CLUSTER_NODE=real adds the real node (root only); the Makefile
# chooses it (hack/local-cluster-node.sh) and this script says which and why.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
dir=${LOCAL_CLUSTER_DIR:-$root/.local-cluster}
bin_dir=${CONTROL_PLANE_DIR:?set CONTROL_PLANE_DIR (make local-cluster does)}
pidfile=$dir/pid
kubeconfig=$dir/kubeconfig

running() { [[ -f $pidfile ]] && kill -0 "$(cat "$pidfile")" 2>/dev/null; }

# One line: which node runs the pods, and why (LOCAL_CLUSTER_NODE_REASON
# comes from hack/local-cluster-node.sh through make).
say_node() {
  local node=${LOCAL_CLUSTER_NODE:-kwok} why=${LOCAL_CLUSTER_NODE_REASON:-LOCAL_CLUSTER_NODE is not real}
  [[ ! -s $dir/node-kind ]] || ! running || node=$(cat "$dir/node-kind")
  if [[ $node == real ]]; then
    echo "node: real (kubelet, containerd, runc), so memcached pods really serve: $why"
  else
    echo "node: kwok's fake node, so pods are Ready but run nothing: $why"
  fi
}

up() {
  if running; then
    echo "local cluster already running (pid $(cat "$pidfile"))"
    say_node
  else
    mkdir -p "$dir"
    rm -f "$kubeconfig" "$pidfile"
    go build -o "$root/bin/local-cluster" "$root/hack/local-cluster"
    args=(--dir "$dir" --bin-dir "$bin_dir")
    if [[ ${LOCAL_CLUSTER_NODE:-} == real ]]; then
      args+=(--real-node)
      echo real >"$dir/node-kind"
    else
      echo kwok >"$dir/node-kind"
    fi
    [[ ${LOCAL_CLUSTER_FRESH:-} != true ]] || args+=(--fresh)
    # A session of its own: a Ctrl-C of make run (or of the terminal that
    # ran make local-cluster) must not reach the cluster, which outlives them.
    setsid "$root/bin/local-cluster" "${args[@]}" </dev/null >"$dir/local-cluster.log" 2>&1 &
    echo $! >"$pidfile"
    # The launcher writes the kubeconfig once every component is up.
    for _ in $(seq 1 240); do
      if [[ -s $kubeconfig ]] && "$bin_dir/kubectl" --kubeconfig "$kubeconfig" get --raw /readyz >/dev/null 2>&1; then
        break
      fi
      if ! running; then
        echo "local cluster failed to start; see $dir/local-cluster.log and $dir/logs/" >&2
        tail -n 20 "$dir/local-cluster.log" >&2 || true
        exit 1
      fi
      sleep 0.5
    done
    [[ -s $kubeconfig ]] || { echo "local cluster did not come up within 120s; see $dir/local-cluster.log" >&2; exit 1; }
    echo "local cluster running (pid $(cat "$pidfile"))"
    say_node
    say_restored
  fi
  echo "export KUBECONFIG=$kubeconfig"
}

# A cluster started from a kept directory holds the objects of the last run:
# a Memcached left Degraded then is back, and would otherwise reappear
# unannounced. (The CRD is missing on a first start; nothing is said then.)
say_restored() {
  [[ ${LOCAL_CLUSTER_FRESH:-} != true ]] || return 0
  local n
  n=$({ "$bin_dir/kubectl" --kubeconfig "$kubeconfig" get memcacheds.cache.example.com -A -o name 2>/dev/null || true; } | wc -l)
  if ((n > 0)); then
    echo "restored $n Memcached from the last run in $dir; LOCAL_CLUSTER_FRESH=true starts the cluster empty"
  fi
}

# A real node whose launcher was killed leaves containers, mounts, a bridge
# and iptables rules behind; the launcher's --cleanup removes them.
cleanup_node() {
  if [[ -s /run/localcluster-node.lock ]]; then
    go build -o "$root/bin/local-cluster" "$root/hack/local-cluster"
    "$root/bin/local-cluster" --cleanup --bin-dir "$bin_dir"
  fi
}

down() {
  if ! running; then
    echo "local cluster not running"
    rm -f "$pidfile"
    cleanup_node
    return
  fi
  pid=$(cat "$pidfile")
  kill -TERM "$pid"
  # The launcher stops every component before it exits.
  for _ in $(seq 1 120); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.5
  done
  if kill -0 "$pid" 2>/dev/null; then
    echo "local cluster (pid $pid) did not stop within 60s" >&2
    exit 1
  fi
  rm -f "$pidfile"
  echo "local cluster stopped"
}

case ${1:-} in
  up) up ;;
  down) down ;;
  *) echo "usage: $0 up|down" >&2; exit 2 ;;
esac
