// Package tlsprobe makes TLS handshakes that offer only what a test says
// (a highest version, a list of suites, a list of key exchanges), to see
// which ones a server accepts and what it picks:
//
//	st, err := tlsprobe.Handshake(ctx, addr, tlsprobe.Offer{MaxVersion: tls.VersionTLS12})
//	// err != nil: refused; else st.Version and st.CipherSuite were chosen
//
// It checks no certificate: what is under test is the server's choice of
// protocol, not who it is.
package tlsprobe
