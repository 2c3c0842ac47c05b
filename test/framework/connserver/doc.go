// Package connserver serves a test's hand-written answers on a loopback
// port: a server that is not what a client expects (another protocol, an
// answer that never ends, a handshake and nothing more), which only a real
// listener shows a client's bounds against.
//
//	addr := connserver.Serve(t, nil, func(c net.Conn) { _, _ = c.Write([]byte("ERROR\r\n")) })
package connserver
