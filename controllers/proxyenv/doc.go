// Package proxyenv carries the cluster-wide egress proxy from the operator's
// own environment into the memcached containers it manages.
//
// On OpenShift, OLM injects HTTP_PROXY, HTTPS_PROXY and NO_PROXY into the
// operator's Deployment and restarts the operator when they change. The
// manager reads them once at start with [FromEnvironment]; the Deployment
// builder then calls [Merge] for every container so that each one carries
// exactly those variables, in upper and lower case, and nothing stale. The
// manager's own API clients use them through [ClientProxy].
//
// Proxy URLs may carry credentials (http://user:password@proxy:3128). Log
// them only through [Redact] or [Names].
package proxyenv
