package registrymirror

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/example-inc/memcached-operator/certs/certstest"
)

// Request is one request a mirrored registry answered.
type Request struct {
	// Host is the mirrored registry, as Start named it.
	Host string
	// Method and Path are the request's, Status the answer's.
	Method, Path string
	Status       int
}

// Mirror is the set of mirrored registries and the proxy in front of them.
type Mirror struct {
	// ProxyURL is the HTTPS proxy that answers for the mirrored hosts.
	ProxyURL string
	// CAFile holds the CA (PEM) that signed the certificate the proxy
	// presents for every mirrored host.
	CAFile string

	hosts   map[string]*hostRegistry
	proxy   *http.Server
	tunnel  *http.Server
	tunnels *tunnelListener

	mu       sync.Mutex
	requests []Request
	refused  []string
}

// hostRegistry is the registry standing in for one host.
type hostRegistry struct {
	listener net.Listener
	server   *http.Server
	handler  http.Handler
}

// Host is the registry a client contacts for the image reference ref, as
// go-containerregistry names it ("docker.io/library/x" is served by
// index.docker.io): the name to give Start.
func Host(ref string) (string, error) {
	r, err := name.ParseReference(ref)
	if err != nil {
		return "", err
	}
	return r.Context().RegistryStr(), nil
}

// Start serves an empty registry for each of hosts and the proxy in front
// of them; the CA file goes to dir. Close stops them.
func Start(dir string, hosts ...string) (m *Mirror, err error) {
	if len(hosts) == 0 {
		return nil, errors.New("registrymirror: no host to mirror")
	}
	ca, err := certstest.NewCA("registrymirror")
	if err != nil {
		return nil, err
	}
	cert, err := ca.Issue(certstest.CertOptions{DNSNames: hosts})
	if err != nil {
		return nil, err
	}
	tlsCert, err := cert.TLSCertificate()
	if err != nil {
		return nil, err
	}
	m = &Mirror{
		CAFile:  filepath.Join(dir, "registrymirror-ca.crt"),
		hosts:   map[string]*hostRegistry{},
		tunnels: &tunnelListener{conns: make(chan net.Conn), done: make(chan struct{})},
	}
	if err := os.WriteFile(m.CAFile, ca.PEM, 0o644); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			m.Close()
		}
	}()
	// The registries log every request; the test reads Requests instead.
	quiet := log.New(io.Discard, "", 0)
	for _, h := range hosts {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		r := &hostRegistry{listener: l, handler: m.recorded(h, registry.New(registry.Logger(quiet)))}
		r.server = &http.Server{Handler: r.handler, ReadHeaderTimeout: 10 * time.Second}
		m.hosts[h] = r
		go func() { _ = r.server.Serve(l) }()
	}

	m.tunnel = &http.Server{
		Handler:           http.HandlerFunc(m.serveTunnelled),
		ReadHeaderTimeout: 10 * time.Second,
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			return context.WithValue(ctx, tunnelHostKey{}, c.(tunnelConn).host)
		},
	}
	go func() { _ = m.tunnel.Serve(m.tunnels) }()
	tlsConfig := &tls.Config{Certificates: []tls.Certificate{tlsCert}, MinVersion: tls.VersionTLS12}

	pl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	m.ProxyURL = "http://" + pl.Addr().String()
	m.proxy = &http.Server{
		Handler:           http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { m.serveProxy(w, r, tlsConfig) }),
		ReadHeaderTimeout: 10 * time.Second,
	}
	go func() { _ = m.proxy.Serve(pl) }()
	return m, nil
}

// Endpoint is the plain-HTTP loopback address of host's registry, as a
// registry mirror is configured ("http://127.0.0.1:<port>").
func (m *Mirror) Endpoint(host string) string {
	r, ok := m.hosts[host]
	if !ok {
		return ""
	}
	return "http://" + r.listener.Addr().String()
}

// ProxyEnv are the variables that send a program's registry traffic (any
// HTTP(S) client that honours the proxy variables, as Go's does) to the
// proxy and make it trust the mirror's CA. Append them after os.Environ():
// the last value of a variable wins. NO_PROXY is emptied so that no
// inherited exception lets a request go around the proxy; Go never proxies
// loopback addresses, which stay local anyway.
func (m *Mirror) ProxyEnv() []string {
	return []string{
		"HTTPS_PROXY=" + m.ProxyURL, "https_proxy=" + m.ProxyURL,
		"HTTP_PROXY=" + m.ProxyURL, "http_proxy=" + m.ProxyURL,
		"NO_PROXY=", "no_proxy=",
		"SSL_CERT_FILE=" + m.CAFile,
	}
}

// Push writes img to the registry mirroring ref's host, under ref's
// repository and tag, and returns its digest: the manifest digest a client
// resolving ref gets.
func (m *Mirror) Push(ctx context.Context, ref string, img v1.Image) (v1.Hash, error) {
	tag, err := name.NewTag(ref)
	if err != nil {
		return v1.Hash{}, fmt.Errorf("registrymirror: push by tag: %w", err)
	}
	r, ok := m.hosts[tag.RegistryStr()]
	if !ok {
		return v1.Hash{}, fmt.Errorf("registrymirror: %s is not mirrored (%s)", tag.RegistryStr(), ref)
	}
	// 127.0.0.1 is spoken to in plain HTTP (go-containerregistry's rule for
	// loopback registries).
	local, err := name.NewTag(fmt.Sprintf("%s/%s:%s", r.listener.Addr(), tag.RepositoryStr(), tag.TagStr()))
	if err != nil {
		return v1.Hash{}, err
	}
	if err := remote.Write(local, img, remote.WithContext(ctx)); err != nil {
		return v1.Hash{}, fmt.Errorf("registrymirror: push %s: %w", ref, err)
	}
	return img.Digest()
}

// Requests are the requests the registries answered, in order.
func (m *Mirror) Requests() []Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.requests)
}

// Refused are the proxy requests that named no mirrored host ("CONNECT
// host:port", or the method and URL of a plain proxy request), in order.
func (m *Mirror) Refused() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.refused)
}

// Close stops the proxy and the registries; their content is gone.
func (m *Mirror) Close() {
	for _, s := range []*http.Server{m.proxy, m.tunnel} {
		if s != nil {
			_ = s.Close()
		}
	}
	_ = m.tunnels.Close()
	for _, r := range m.hosts {
		_ = r.server.Close()
	}
}

// recorded records every request h answers for host.
func (m *Mirror) recorded(host string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		h.ServeHTTP(sw, r)
		m.mu.Lock()
		defer m.mu.Unlock()
		m.requests = append(m.requests, Request{Host: host, Method: r.Method, Path: r.URL.Path, Status: sw.status})
	})
}

func (m *Mirror) refuse(w http.ResponseWriter, what string) {
	m.mu.Lock()
	m.refused = append(m.refused, what)
	m.mu.Unlock()
	http.Error(w, "registrymirror: only CONNECT to a mirrored host on port 443 is served: "+what, http.StatusForbidden)
}

// serveProxy answers a CONNECT to a mirrored host by terminating TLS
// itself, as that host, and handing the connection to the tunnel server.
// Nothing is ever dialled.
func (m *Mirror) serveProxy(w http.ResponseWriter, r *http.Request, tlsConfig *tls.Config) {
	if r.Method != http.MethodConnect {
		m.refuse(w, r.Method+" "+r.URL.String())
		return
	}
	host, port, err := net.SplitHostPort(r.Host)
	if _, ok := m.hosts[host]; err != nil || !ok || port != "443" {
		m.refuse(w, "CONNECT "+r.Host)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		http.Error(w, "registrymirror: cannot take over the connection", http.StatusInternalServerError)
		return
	}
	conn, buf, err := hj.Hijack()
	if err != nil {
		return
	}
	// A client sends its TLS hello only after the 200, so nothing can be
	// buffered yet; if something is, the client is not one we understand.
	if buf.Reader.Buffered() > 0 {
		_ = conn.Close()
		return
	}
	if _, err := io.WriteString(conn, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		_ = conn.Close()
		return
	}
	select {
	case m.tunnels.conns <- tunnelConn{Conn: tls.Server(conn, tlsConfig), host: host}:
	case <-m.tunnels.done:
		_ = conn.Close()
	}
}

// serveTunnelled serves a request that came through a tunnel with the
// registry of the host the tunnel was opened to.
func (m *Mirror) serveTunnelled(w http.ResponseWriter, r *http.Request) {
	host := r.Context().Value(tunnelHostKey{}).(string)
	if h, _, err := net.SplitHostPort(r.Host); (err == nil && h != host) || (err != nil && r.Host != host) {
		m.refuse(w, fmt.Sprintf("%s https://%s%s through a tunnel to %s", r.Method, r.Host, r.URL.Path, host))
		return
	}
	m.hosts[host].handler.ServeHTTP(w, r)
}

type tunnelHostKey struct{}

// tunnelConn is a TLS connection that came through the proxy, opened to
// host.
type tunnelConn struct {
	net.Conn
	host string
}

// tunnelListener hands the tunnel server the connections the proxy took
// over.
type tunnelListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func (l *tunnelListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *tunnelListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *tunnelListener) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)} }

// statusWriter remembers the status of an answer.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}
