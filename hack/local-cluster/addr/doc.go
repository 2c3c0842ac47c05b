// Package addr picks free TCP ports on loopback, as controller-runtime's
// pkg/internal/testing/addr does: a test that needs a port imports this and
// nothing else, not the local cluster that also uses it.
//
//	ports, err := addr.FreePorts(2)
package addr
