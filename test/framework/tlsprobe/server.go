package tlsprobe

import (
	"crypto/tls"
	"net"
	"testing"

	"github.com/example-inc/memcached-operator/test/framework/connserver"
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
	return connserver.Serve(t, l, func(conn net.Conn) { _ = conn.(*tls.Conn).Handshake() })
}
