package connserver

import (
	"net"
	"testing"
)

// Serve accepts connections on l until the test ends, each in a goroutine
// that runs handle and then closes it, and returns l's address. A nil l
// is a new plain listener on 127.0.0.1.
func Serve(t testing.TB, l net.Listener, handle func(net.Conn)) string {
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
