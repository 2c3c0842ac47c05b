#!/usr/bin/env bash
# `make run`: runs the operator on this host. With no cluster configured (no
# KUBECONFIG, no ~/.kube/config) it starts the local cluster first and leaves
# it running afterwards (`make local-cluster-down` stops it); either way it
# installs the CRD and runs the manager in the foreground.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
: "${KUSTOMIZE:=$root/bin/kustomize}" "${KUBECTL:=$root/bin/kubectl}"

if [[ -z ${KUBECONFIG:-} && ! -f $HOME/.kube/config ]]; then
  "$root/hack/local-cluster.sh" up
  export KUBECONFIG=${LOCAL_CLUSTER_DIR:-$root/.local-cluster}/kubeconfig
  echo
  echo "No cluster was configured, so the operator runs on the local cluster. In a second terminal:"
  echo "  export KUBECONFIG=$KUBECONFIG"
  echo "  bin/kubectl apply -f config/samples/"
  echo "Stop the cluster with: make local-cluster-down"
  echo
fi

# Webhooks join `make run` once it can give them a serving certificate.
export ENABLE_WEBHOOKS=${ENABLE_WEBHOOKS:-false}

"$KUSTOMIZE" build "$root/config/crd" | "$KUBECTL" apply --server-side -f -
cd "$root"
exec go run ./main.go ${RUN_ARGS:-} "$@"
