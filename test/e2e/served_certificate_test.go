package e2e

import (
	"context"
	"crypto/tls"
	"math/big"
	"net"
	"strconv"
	"time"
)

// servedCertificateSerial is the serial number of the certificate a TLS
// server at 127.0.0.1:port presents: which certificate it serves, not
// whether it is trusted (the API server checks that).
func servedCertificateSerial(ctx context.Context, port int) (*big.Int, error) {
	d := tls.Dialer{
		NetDialer: &net.Dialer{Timeout: 2 * time.Second},
		Config:    &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // reads the certificate, trusts nothing
	}
	conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return nil, err
	}
	defer func() { _ = conn.Close() }()
	return conn.(*tls.Conn).ConnectionState().PeerCertificates[0].SerialNumber, nil
}
