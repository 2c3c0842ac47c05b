package tlsprobe

import (
	"crypto/tls"
	"testing"
)

// Serve answers TLS handshakes configured by cfg on a loopback port until
// the test ends, and returns its address. Each connection is closed once
// its handshake ends, so a test sees what the server would agree to, and
// nothing else.
func Serve(t testing.TB, cfg *tls.Config) string {
	t.Helper()
	l, err := tls.Listen("tcp", "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				_ = conn.(*tls.Conn).Handshake()
				_ = conn.Close()
			}()
		}
	}()
	return l.Addr().String()
}
