// Package pki issues the certificates tests need: a CA, server and client
// certificates signed by it, and the broken ones (expired, a key of
// another certificate) that a TLS check must refuse. Keys are ECDSA P-256:
// quick to make, and accepted by Go, OpenSSL and memcached alike.
package pki
