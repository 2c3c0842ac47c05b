// Package operand describes the memcached the operator runs: the settings a
// Memcached's spec asks for, the command line that gives them to memcached,
// the container's resources, the pods' labels and default placement, and the
// rules memcached itself enforces when it starts.
//
// Everything here is a pure function of the spec, shared by the webhooks,
// which default and validate a Memcached, and by the reconciler, which builds
// its Deployment: a spec the webhooks admit is one memcached accepts.
// test/e2e proves the command line against real memcached.
package operand
