package memcache

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"
)

// ErrNotFound is Get's answer for a key memcached does not hold.
var ErrNotFound = errors.New("memcache: not found")

// Client is one connection to a memcached.
type Client struct {
	conn net.Conn
	r    *bufio.Reader
	// w buffers the meta commands, which a fill pipelines.
	w       *bufio.Writer
	timeout time.Duration
}

func newClient(conn net.Conn) *Client {
	return &Client{conn: conn, r: bufio.NewReader(conn), w: bufio.NewWriterSize(conn, 64<<10), timeout: 10 * time.Second}
}

// Dial connects to addr (host:port) and bounds every later request by 10
// seconds (SetTimeout).
func Dial(ctx context.Context, addr string) (*Client, error) {
	conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	return newClient(conn), nil
}

// DialTLS connects to addr over TLS with config, completing the handshake
// before it returns. With TLS 1.3 a server's refusal of the client's
// certificate comes after the handshake, as the first request's error.
func DialTLS(ctx context.Context, addr string, config *tls.Config) (*Client, error) {
	conn, err := (&tls.Dialer{Config: config}).DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	return newClient(conn), nil
}

// PeerCertificate is the certificate a TLS connection's server presented,
// nil for a plain connection.
func (c *Client) PeerCertificate() *x509.Certificate {
	t, ok := c.conn.(*tls.Conn)
	if !ok || len(t.ConnectionState().PeerCertificates) == 0 {
		return nil
	}
	return t.ConnectionState().PeerCertificates[0]
}

// Close closes the connection.
func (c *Client) Close() error { return c.conn.Close() }

// SetTimeout bounds each later request by d: a fill of a thousand
// connections at once on two cores takes longer than the default.
func (c *Client) SetTimeout(d time.Duration) { c.timeout = d }

// deadline bounds the request that starts now.
func (c *Client) deadline() error { return c.conn.SetDeadline(time.Now().Add(c.timeout)) }

func (c *Client) send(format string, args ...any) error {
	if err := c.deadline(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(c.conn, format, args...)
	return err
}

func (c *Client) line() (string, error) {
	l, err := c.r.ReadString('\n')
	if err != nil {
		return "", err
	}
	return strings.TrimSuffix(l, "\r\n"), nil
}

// Set stores value under key, with no flags and no expiry.
func (c *Client) Set(key string, value []byte) error {
	if err := c.send("set %s 0 0 %d\r\n", key, len(value)); err != nil {
		return err
	}
	if _, err := c.conn.Write(append(value, '\r', '\n')); err != nil {
		return err
	}
	l, err := c.line()
	if err != nil {
		return err
	}
	if l != "STORED" {
		return fmt.Errorf("memcache: set %s: %s", key, l)
	}
	return nil
}

// Get reads the value of key.
func (c *Client) Get(key string) ([]byte, error) {
	if err := c.send("get %s\r\n", key); err != nil {
		return nil, err
	}
	l, err := c.line()
	if err != nil {
		return nil, err
	}
	if l == "END" {
		return nil, ErrNotFound
	}
	// VALUE <key> <flags> <bytes>
	f := strings.Fields(l)
	if len(f) != 4 || f[0] != "VALUE" || f[1] != key {
		return nil, fmt.Errorf("memcache: get %s: %s", key, l)
	}
	n, err := strconv.Atoi(f[3])
	if err != nil {
		return nil, fmt.Errorf("memcache: get %s: %s", key, l)
	}
	data := make([]byte, n+2)
	if _, err := io.ReadFull(c.r, data); err != nil {
		return nil, err
	}
	if end, err := c.line(); err != nil || end != "END" {
		return nil, fmt.Errorf("memcache: get %s: no END after the value (%q, %v)", key, end, err)
	}
	return data[:n], nil
}

// RoundTrip connects to addr, stores value under key, reads it back and
// fails unless memcached returned exactly what was stored.
func RoundTrip(ctx context.Context, addr, key string, value []byte) error {
	c, err := Dial(ctx, addr)
	if err != nil {
		return err
	}
	defer func() { _ = c.Close() }()
	if err := c.Set(key, value); err != nil {
		return err
	}
	got, err := c.Get(key)
	if err != nil {
		return err
	}
	if !bytes.Equal(got, value) {
		return fmt.Errorf("get %s returned %q, not the %q stored", key, got, value)
	}
	return nil
}
