package certstest

import (
	"crypto/tls"
	"net"
	"testing"
)

// ServeConn accepts connections on l until the test ends, each in a
// goroutine that runs handle and then closes it, and returns l's address.
// A nil l is a new plain listener on 127.0.0.1. It serves what a client does
// not expect (another protocol, an answer that never ends, a handshake and
// nothing more), whose bounds only a real listener shows:
//
//	addr := certstest.ServeConn(t, nil, func(c net.Conn) { _, _ = c.Write([]byte("ERROR\r\n")) })
func ServeConn(t testing.TB, l net.Listener, handle func(net.Conn)) string {
	t.Helper()
	if l == nil {
		var err error
		if l, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { _ = l.Close() })
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer func() { _ = conn.Close() }()
				handle(conn)
			}()
		}
	}()
	return l.Addr().String()
}

// ServeTLS answers TLS handshakes configured by cfg on a loopback port until
// the test ends, and returns its address. Each connection is closed once
// its handshake ends, so a test sees what the server would agree to, and
// nothing else.
func ServeTLS(t testing.TB, cfg *tls.Config) string {
	t.Helper()
	l, err := tls.Listen("tcp", "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	return ServeConn(t, l, func(conn net.Conn) { _ = conn.(*tls.Conn).Handshake() })
}
