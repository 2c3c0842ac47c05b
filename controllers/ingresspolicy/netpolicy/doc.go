// Package netpolicy works out what a set of NetworkPolicies admits into one
// pod, as the NetworkPolicy API defines it, without a CNI plugin: the tests
// of the policies the operator writes (package ingresspolicy), the manifest
// checks of config/default and bundle/ and the OLM suite's check of what OLM
// installed all ask it the same question. Only tests import it.
//
//	admitted, err := netpolicy.AdmittedIngress(policies, pod.Labels)
//	// {"TCP/9443": ["any"], "TCP/8443": ["namespaces{metrics=enabled}"]}
//
// It reads the objects only. Nothing here shows that a cluster enforces
// them: that takes a CNI plugin that implements NetworkPolicy.
package netpolicy
