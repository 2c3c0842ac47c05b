#!/usr/bin/env bash
# `make run`: runs the operator on this host. With no cluster configured (no
# KUBECONFIG, no ~/.kube/config) it starts the local cluster first and leaves
# it running afterwards (`make local-cluster-down` stops it, keeping its
# objects for the next start); either way it installs the CRD and runs the
# manager in the foreground.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
: "${KUSTOMIZE:=$root/bin/kustomize}" "${KUBECTL:=$root/bin/kubectl}"
state_dir=${LOCAL_CLUSTER_DIR:-$root/.local-cluster}

# Two operators on one cluster would fight over the objects and over the
# webhook configurations that local mode writes.
pidfile=$state_dir/operator.pid
if [[ -f $pidfile ]] && kill -0 "$(cat "$pidfile")" 2>/dev/null; then
  echo "Another make run (pid $(cat "$pidfile")) is already running the operator from this directory: stop it first (Ctrl-C in its terminal)." >&2
  exit 1
fi
# make run asks this alone first, so that a second run refuses before
# building anything.
[[ ${1:-} != --refuse-if-running ]] || exit 0

# The Go Cryptographic Module is the manager's build setting alone: it goes
# to that build below, and into no process this script starts.
gofips140=${GOFIPS140:?the Makefile sets it: use make run}
unset GOFIPS140

if [[ -z ${KUBECONFIG:-} && ! -f $HOME/.kube/config ]]; then
  fresh=()
  [[ ${LOCAL_CLUSTER_FRESH:-} != true ]] || fresh=(--fresh)
  # Its export line is printed below, with the other commands for the user.
  "${LOCAL_CLUSTER:?the Makefile sets it: use make run}" up --dir "$state_dir" --bin-dir "$CONTROL_PLANE_DIR" \
    --node "${LOCAL_CLUSTER_NODE:-auto}" --packages "${NODE_PACKAGES:-}" "${fresh[@]}" | { grep -v '^export KUBECONFIG=' || true; }
  export KUBECONFIG=$state_dir/kubeconfig
  if [[ $(cat "$state_dir/node-kind" 2>/dev/null) == real ]]; then
    # The images the real node has: nothing can be pulled.
    export RELATED_IMAGE_MEMCACHED=${RELATED_IMAGE_MEMCACHED:-localhost/memcached:debian}
    export RELATED_IMAGE_TLS_RELOADER=${RELATED_IMAGE_TLS_RELOADER:-localhost/memcached-tls-reloader:test}
    export RELATED_IMAGE_MEMCACHED_EXPORTER=${RELATED_IMAGE_MEMCACHED_EXPORTER:-localhost/memcached-exporter:test}
  else
    # kwok's pods have addresses nothing on this host routes: asking them
    # which certificate they serve, or for their counters while a rollout
    # waits for warmth, would send packets off the machine.
    export SERVED_CERTIFICATE_INTERVAL=0 WARMUP_INTERVAL=0
  fi
  echo
  echo "No cluster was configured, so the operator runs on the local cluster. In a second terminal:"
  echo "  export KUBECONFIG=$KUBECONFIG"
  echo "  bin/kubectl apply -k config/samples/"
  echo "Stop the cluster with: make local-cluster-down"
  echo
fi

# The webhooks run in local mode (package certs): the operator makes a CA and a
# certificate for 127.0.0.1 once, keeps them in $WEBHOOK_CERT_DIR, and points
# the webhook configurations at https://127.0.0.1:<--webhook-port> (deleting them again when
# it stops). Only an API server on this host can call that address, so with a
# cluster elsewhere the webhooks stay off unless ENABLE_WEBHOOKS says otherwise.
server=$("$KUBECTL" config view --minify -o jsonpath='{.clusters[0].cluster.server}' 2>/dev/null || true)
host=${server#https://}
host=${host%:*}
host=${host#[}
host=${host%]}
# The local cluster's kubeconfig names loopback (with a real node, a relay to
# the API server on the pod network's gateway), which no proxy variable
# diverts; another cluster may be on any address of this machine.
case $host in
  localhost | 127.* | ::1) on_this_host=true ;;
  # Read whole before matching: grep -q would stop reading at the first
  # match, and under pipefail ip's SIGPIPE would turn the match into false.
  *) addrs=$(ip -o addr show 2>/dev/null || true)
     if grep -qE "inet6? $host/" <<<"$addrs"; then on_this_host=true; else on_this_host=false; fi ;;
esac
export ENABLE_WEBHOOKS=${ENABLE_WEBHOOKS:-$on_this_host}
if [[ $ENABLE_WEBHOOKS == false && $on_this_host == false ]]; then
  echo "The API server ($server) is not on this host, so it could not call the webhooks: running without them (ENABLE_WEBHOOKS=true forces them on)."
fi
: "${WEBHOOK_CERT_DIR:=$state_dir/webhook-certs}"

# The first port from $1 up that nothing on this host's loopback answers on.
free_port() {
  local p=$1
  while (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; do p=$((p + 1)); done
  echo "$p"
}
# Ports nobody asked for move out of the way of whatever holds the default.
ports=()
if [[ " ${RUN_ARGS:-} $* " != *" --webhook-port"* ]]; then
  port=$(free_port 9443)
  [[ $port == 9443 ]] || echo "Port 9443 is in use: the webhook server listens on 127.0.0.1:$port."
  ports+=(--webhook-port="$port")
fi
if [[ " ${RUN_ARGS:-} $* " != *" --health-probe-bind-address"* ]]; then
  port=$(free_port 8081)
  [[ $port == 8081 ]] || echo "Port 8081 is in use: the health probe listens on 127.0.0.1:$port."
  # The health probe answers this host only: nothing probes a host process.
  ports+=(--health-probe-bind-address=127.0.0.1:"$port")
fi

"$KUSTOMIZE" build "$root/config/crd" | "$KUBECTL" apply --server-side -f -
cd "$root"
mkdir -p "$state_dir"
echo $$ >"$pidfile"

# A terminal's Ctrl-C goes to its whole foreground process group, make's
# too, and make then fails ("make: *** [Makefile:NNN: run] Interrupt" or
# "Error 1") whatever the operator did. Run from a terminal we are in the
# foreground of, the operator becomes a job of its own that holds the
# terminal (job control, fg): Ctrl-C reaches only it, it stops cleanly, and
# make ends with its exit status, 0. Without a terminal (CI, a pipe) there
# is no Ctrl-C to route, and the operator runs as before.
foreground_terminal() {
  local st
  [[ -t 0 ]] && read -ra st </proc/$$/stat && [[ ${st[4]} == "${st[7]}" ]]
}
# Built, not `go run`: go run exits 1 after an interrupt whatever the
# operator's own exit status. Built as make build, the image and the tests'
# operator builds build it: static, -trimpath, with the Go Cryptographic
# Module (docs/fips.md). Any other setting compiles every dependency again,
# about 7 CPU-minutes on a clean machine.
CGO_ENABLED=0 GOFIPS140="$gofips140" go build -trimpath -o "$state_dir/manager" .
# Human-readable logs (console encoder): make run is read by a person.
operator=("$state_dir/manager" --webhook-cert-mode=local --webhook-cert-dir="$WEBHOOK_CERT_DIR"
  --webhook-manifests="$root/config/webhook/manifests.yaml" --zap-encoder=console "${ports[@]}" ${RUN_ARGS:-} "$@")
if ! foreground_terminal; then
  exec "${operator[@]}"
fi
set -m
"${operator[@]}" &
# fg prints the job's command line; the operator's own output says enough.
fg %% >/dev/null
