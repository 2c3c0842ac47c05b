package e2e

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
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

// servedCertificate connects to the webhook server at addr as the API
// server does for a service reference, with serverName
// <service>.<namespace>.svc and caBundle as the only roots, and returns the
// certificate it presented. The handshake fails unless that certificate
// verifies for the name against the bundle.
func servedCertificate(ctx context.Context, addr, serverName string, caBundle []byte) (*x509.Certificate, error) {
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(caBundle) {
		return nil, fmt.Errorf("caBundle holds no PEM certificate")
	}
	d := tls.Dialer{Config: &tls.Config{ServerName: serverName, RootCAs: roots, MinVersion: tls.VersionTLS12}}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	defer func() { _ = conn.Close() }()
	return conn.(*tls.Conn).ConnectionState().PeerCertificates[0], nil
}

// parseCertificatePEM parses the first certificate of a PEM file.
func parseCertificatePEM(data []byte) (*x509.Certificate, error) {
	block, _ := pem.Decode(data)
	if block == nil || block.Type != "CERTIFICATE" {
		return nil, fmt.Errorf("no PEM certificate")
	}
	return x509.ParseCertificate(block.Bytes)
}

// verifyOptions verify a certificate for dnsName with ca as the only root.
func verifyOptions(ca *x509.Certificate, dnsName string) x509.VerifyOptions {
	roots := x509.NewCertPool()
	roots.AddCert(ca)
	return x509.VerifyOptions{Roots: roots, DNSName: dnsName}
}
