package certstest

import (
	"io"
	"net"
	"testing"
)

// A client reads what handle wrote, then the end of the connection that
// ServeConn closes once handle returns.
func TestServeAnswersAndCloses(t *testing.T) {
	addr := ServeConn(t, nil, func(c net.Conn) { _, _ = c.Write([]byte("hello")) })
	for range 2 {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(conn)
		_ = conn.Close()
		if err != nil || string(got) != "hello" {
			t.Errorf("read %q, %v; want hello and the end", got, err)
		}
	}
}
