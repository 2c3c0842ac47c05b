// Package ingresspolicy keeps the NetworkPolicies that admit into the
// operator's own pods only what they serve to others: the webhook port, from
// any source (the API server that calls it is rarely a pod a selector could
// name, and the webhooks fail closed), and the metrics port, from namespaces
// labelled metrics: enabled. Where a CNI plugin enforces NetworkPolicies,
// every other port of the manager pod is closed to the network.
//
// The operator keeps them at run time rather than shipping them as
// manifests. OLM accepts a NetworkPolicy in a bundle only from
// operator-registry v1.55 (OpenShift 4.20, and late z-streams of a few
// earlier releases), and a bundle holding one fails to install on the
// earlier OpenShift releases the operator supports; operator-sdk v1.31's
// validator refuses it too. Kept by the manager, the same policies reach
// every cluster through either install path, on the ports the manager really
// serves, selecting its pods by its Deployment's own selector, and owned by
// that Deployment, so that uninstalling the operator removes them.
//
// [Desired] builds them; [Keeper] applies them, and applies them again
// when someone changes or deletes one.
package ingresspolicy
