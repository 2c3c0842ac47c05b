// Package certstest is what tests of certificates and TLS need, in the
// manner of net/http/httptest: a CA that issues server and client
// certificates and the broken ones a check must refuse; TLS handshakes that
// offer only what a test says; servers on loopback that answer as a test
// writes them, and free loopback ports for the servers a test starts
// itself; and a Secret volume written as kubelet writes it.
//
//	ca, err := certstest.NewCA("test")
//	c, err := ca.Issue(certstest.CertOptions{DNSNames: []string{"cache.ns.svc"}})
//	addr := certstest.ServeTLS(t, cfg)
//	ports, err := certstest.FreePorts(2) // for servers a test configures
//	st, err := certstest.Handshake(ctx, addr, certstest.Offer{MaxVersion: tls.VersionTLS12})
//	err = certstest.WriteSecretVolume(dir, secret.Data)
//
// Keys are ECDSA P-256 unless asked otherwise: quick to make, and accepted
// by Go, OpenSSL and memcached alike. Handshake checks no certificate: what
// it tests is the server's choice of protocol, not who the server is.
//
// Kubelet never rewrites a projected file in place. It writes every key into
// a new hidden directory, points the ..data symlink at it with one atomic
// rename, and leaves each key as a symlink through ..data, then removes the
// old directory:
//
//	dir/..2026_05_01_10_00_00.123456789/tls.crt
//	dir/..data -> ..2026_05_01_10_00_00.123456789
//	dir/tls.crt -> ..data/tls.crt
//
// A reader therefore sees either the old set of files or the new one, never
// a new certificate with an old key, and file watchers see the old files
// removed rather than written. WriteSecretVolume reproduces that layout.
package certstest
