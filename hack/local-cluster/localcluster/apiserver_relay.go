package localcluster

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"time"
)

// apiServerRelay relays TCP connections from a port on 127.0.0.1 to the
// API server on the bridge address, where a real node's pods reach it.
// Clients on this machine (kubectl, make run's operator, the tests) use the
// relay: Go's proxy rules and kubectl's never send loopback traffic through
// HTTP_PROXY or HTTPS_PROXY, whatever NO_PROXY says, while the bridge address
// would go through the proxy of a shell on a corporate network.
type apiServerRelay struct {
	ln     net.Listener
	target string

	mu    sync.Mutex
	conns map[net.Conn]struct{}
	wg    sync.WaitGroup
}

// relayAPIServer listens on a free port of 127.0.0.1 and relays every
// connection to target, a host:port, until close.
func relayAPIServer(target string) (*apiServerRelay, error) {
	// A bad target would only show as connections reset one by one.
	if _, _, err := net.SplitHostPort(target); err != nil {
		return nil, fmt.Errorf("relay target %q: %w", target, err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &apiServerRelay{ln: ln, target: target, conns: map[net.Conn]struct{}{}}
	r.wg.Add(1)
	go r.serve()
	return r, nil
}

// port is the relay's port on 127.0.0.1.
func (r *apiServerRelay) port() int { return r.ln.Addr().(*net.TCPAddr).Port }

func (r *apiServerRelay) serve() {
	defer r.wg.Done()
	for {
		c, err := r.ln.Accept()
		if err != nil {
			return
		}
		if !r.track(c) {
			return
		}
		r.wg.Add(1)
		go r.relay(c)
	}
}

// track records c so that close can end it; false once closed.
func (r *apiServerRelay) track(c net.Conn) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.conns == nil {
		_ = c.Close()
		return false
	}
	r.conns[c] = struct{}{}
	return true
}

func (r *apiServerRelay) untrack(cs ...net.Conn) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range cs {
		_ = c.Close()
		delete(r.conns, c)
	}
}

func (r *apiServerRelay) relay(client net.Conn) {
	defer r.wg.Done()
	// A stopped API server refuses at once; the dial bound only guards
	// against a bridge that lost its address.
	server, err := net.DialTimeout("tcp", r.target, 10*time.Second)
	if err != nil {
		r.untrack(client)
		return
	}
	if !r.track(server) {
		r.untrack(client)
		return
	}
	// Either side's end ends both: a TLS connection is no use half closed,
	// and a client gone must not keep the server's side open.
	done := make(chan struct{})
	go func() {
		_, _ = io.Copy(server, client)
		r.untrack(client, server)
		close(done)
	}()
	_, _ = io.Copy(client, server)
	r.untrack(client, server)
	<-done
}

// close stops accepting, ends every relayed connection and waits for the
// relay's goroutines.
func (r *apiServerRelay) close() error {
	err := r.ln.Close()
	r.mu.Lock()
	for c := range r.conns {
		_ = c.Close()
	}
	r.conns = nil
	r.mu.Unlock()
	r.wg.Wait()
	if errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}

// componentEnv is the environment of the cluster's processes: this one's
// without the proxy variables. Every address they talk to is on this
// machine, and the API server would otherwise send its calls to webhook
// Services (ClusterIPs, not exempt from a proxy as loopback is) through a
// proxy that a shell on a corporate network names.
func componentEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch strings.ToUpper(name) {
		case "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY":
			continue
		}
		env = append(env, kv)
	}
	return env
}
