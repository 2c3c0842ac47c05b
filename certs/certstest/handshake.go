package certstest

import (
	"cmp"
	"context"
	"crypto/tls"
	"time"
)

// Offer is what the client offers.
type Offer struct {
	// MinVersion and MaxVersion bound the versions offered (0: TLS 1.0 and
	// TLS 1.3); every version between them is offered.
	MinVersion, MaxVersion uint16
	// CipherSuites are the TLS 1.2-and-older suites offered (nil: Go's
	// defaults). TLS 1.3 suites cannot be chosen in Go.
	CipherSuites []uint16
	// Curves are the key exchanges offered, in order (nil: Go's defaults).
	Curves []tls.CurveID
	// NextProtos are the ALPN protocols offered (nil: none).
	NextProtos []string
}

// Handshake connects to addr, completes a handshake offering o, and returns
// what was agreed; an error means the server refused (or was not there).
func Handshake(ctx context.Context, addr string, o Offer) (tls.ConnectionState, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	d := tls.Dialer{Config: &tls.Config{
		MinVersion:         cmp.Or(o.MinVersion, tls.VersionTLS10),
		MaxVersion:         o.MaxVersion,
		CipherSuites:       o.CipherSuites,
		CurvePreferences:   o.Curves,
		NextProtos:         o.NextProtos,
		InsecureSkipVerify: true, //nolint:gosec // see the package doc
	}}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return tls.ConnectionState{}, err
	}
	defer func() { _ = conn.Close() }()
	return conn.(*tls.Conn).ConnectionState(), nil
}
