package memcached_test

import (
	"context"
	"crypto/tls"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/example-inc/memcached-operator/certs/certstest"
	"github.com/example-inc/memcached-operator/certs/memcachedtls"
	"github.com/example-inc/memcached-operator/hack/local-cluster/memcachedproc"
	"github.com/example-inc/memcached-operator/hack/local-cluster/process"
	"github.com/example-inc/memcached-operator/test/framework/memcache"
)

// memcached is a memcached release (make memcached) serving TLS with the
// files of a Secret volume, as in the pod: TLS on one loopback port, plain
// text on another for the sidecar.
type memcached struct {
	rel  memcachedproc.Release
	proc *process.Process
	// tlsAddr is the TLS listener; adminAddr the plain one.
	tlsAddr, adminAddr string
}

// newMemcached picks the ports of rel's memcached; start starts it.
func newMemcached(t *testing.T, rel memcachedproc.Release) *memcached {
	t.Helper()
	ports, err := certstest.FreePorts(2)
	if err != nil {
		t.Fatal(err)
	}
	return &memcached{
		rel:       rel,
		tlsAddr:   "127.0.0.1:" + strconv.Itoa(ports[0]),
		adminAddr: "127.0.0.1:" + strconv.Itoa(ports[1]),
	}
}

// secretVolume writes c, issued by ca, as the kubelet writes a TLS Secret's
// volume, in a directory of t's, and returns that directory.
func secretVolume(t *testing.T, ca *certstest.CA, c certstest.Cert) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "tls")
	if err := certstest.WriteSecretVolume(dir, ca.SecretData(c)); err != nil {
		t.Fatal(err)
	}
	return dir
}

// startMemcached is newMemcached, started.
func startMemcached(t *testing.T, rel memcachedproc.Release, dir string) *memcached {
	t.Helper()
	m := newMemcached(t, rel)
	m.start(t, dir)
	return m
}

// startShippedTLS starts the release shipped serving a loopback
// certificate of a CA of its own, from the Secret volume it returns.
func startShippedTLS(t *testing.T) (string, *memcached) {
	ca := certstest.NewTestCA(t)
	dir := secretVolume(t, ca, ca.IssueLoopback(t, certstest.CertOptions{}))
	return dir, startMemcached(t, memcachedproc.Shipped(), dir)
}

// start starts memcached with the Secret volume at dir, and stops it when
// the test ends. It returns once memcached answers on its plain listener.
func (m *memcached) start(t *testing.T, dir string) {
	t.Helper()
	_, tlsPort, _ := net.SplitHostPort(m.tlsAddr)
	args := []string{"--port=" + tlsPort, "--udp-port=0",
		"--listen=127.0.0.1,notls:" + m.adminAddr, "--enable-ssl",
		"--extended=ssl_chain_cert=" + filepath.Join(dir, memcachedtls.CertFile) + ",ssl_key=" + filepath.Join(dir, memcachedtls.KeyFile)}
	// memcached refuses to run as root without a user to switch to; root
	// keeps the files that certstest.WriteSecretVolume writes readable to it.
	if os.Geteuid() == 0 {
		args = append(args, "--user=root")
	}
	bin, args, err := m.rel.Command(args...)
	if err != nil {
		t.Fatal(err)
	}
	m.proc, err = process.Start(process.Spec{Path: bin, Args: args, LogPath: filepath.Join(t.TempDir(), "memcached.log")})
	if err != nil {
		t.Fatal(err)
	}
	// memcached keeps nothing to save, and takes a second to notice a
	// SIGTERM.
	t.Cleanup(func() { _ = m.proc.Kill() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := m.proc.WaitFor(ctx, "its plain listener", func(ctx context.Context) error {
		return answersVersion(ctx, m.adminAddr)
	}); err != nil {
		t.Fatal(err)
	}
}

// answersVersion is nil when a memcached serves requests at plainAddr.
func answersVersion(ctx context.Context, plainAddr string) error {
	c, err := memcache.Dial(ctx, plainAddr)
	if err != nil {
		return err
	}
	defer func() { _ = c.Close() }()
	_, err = c.StatsSettings()
	return err
}

// servedSerial is the serial number of the certificate a new TLS
// handshake with tlsAddr presents, verified against ca.
func servedSerial(ctx context.Context, tlsAddr string, ca *certstest.CA) (*big.Int, error) {
	conn, err := (&tls.Dialer{Config: &tls.Config{RootCAs: ca.Pool()}}).DialContext(ctx, "tcp", tlsAddr)
	if err != nil {
		return nil, err
	}
	defer func() { _ = conn.Close() }()
	return conn.(*tls.Conn).ConnectionState().PeerCertificates[0].SerialNumber, nil
}
