package e2e

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/example-inc/memcached-operator/test/framework/operatorproc"
)

// server is one of the operator's TLS servers.
type server string

const (
	webhookServer server = "webhook"
	metricsServer server = "metrics"
)

func (op *operator) addr(s server) string {
	if s == webhookServer {
		return op.WebhookAddr()
	}
	return op.MetricsAddr()
}

// handshake makes a TLS handshake with addr at exactly version, offering
// the ALPN protocols alpn, and returns what was agreed.
func handshake(ctx context.Context, addr string, version uint16, alpn []string) (tls.ConnectionState, error) {
	d := tls.Dialer{
		NetDialer: &net.Dialer{Timeout: 5 * time.Second},
		Config: &tls.Config{
			MinVersion: version,
			MaxVersion: version,
			NextProtos: alpn,
			// Probes the protocol, trusts nothing: no request is sent.
			InsecureSkipVerify: true, //nolint:gosec // see above
		},
	}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return tls.ConnectionState{}, err
	}
	defer func() { _ = conn.Close() }()
	return conn.(*tls.Conn).ConnectionState(), nil
}

// tlsVersionEntries: every server, every version; 1.2 and newer accepted.
func tlsVersionEntries() []TableEntry {
	versions := []struct {
		name     string
		version  uint16
		accepted bool
	}{
		{"1.0", tls.VersionTLS10, false},
		{"1.1", tls.VersionTLS11, false},
		{"1.2", tls.VersionTLS12, true},
		{"1.3", tls.VersionTLS13, true},
	}
	var out []TableEntry
	for _, s := range []server{webhookServer, metricsServer} {
		for _, v := range versions {
			verdict := "refuses"
			if v.accepted {
				verdict = "accepts"
			}
			out = append(out, Entry(fmt.Sprintf("the %s server %s TLS %s", s, verdict, v.name), s, v.version, v.accepted))
		}
	}
	return out
}

// tlsSpecs are the "TLS" specs of the security container (security_test.go).
func tlsSpecs() {
	Describe("TLS", Ordered, func() {
		// http2 is a second replica with --enable-http2. It waits for the
		// leader election lease the first one holds, so it never reconciles,
		// but like every replica it serves metrics and webhooks; it serves the
		// first one's webhook certificate (mounted mode), so it writes no
		// webhook configuration.
		var http2 *operator

		BeforeAll(func(ctx SpecContext) {
			var err error
			http2, err = startSecurityOperator(ctx, operatorOptions{
				name:           "security-operator-http2",
				webhooks:       operatorproc.WebhooksMounted,
				webhookCertDir: op.Options().WebhookCertDir,
				args:           []string{"--enable-http2"},
			})
			Expect(err).NotTo(HaveOccurred())
			DeferCleanup(http2.stop)
		}, NodeTimeout(readyTimeout+time.Minute))

		DescribeTable("versions",
			func(ctx SpecContext, s server, version uint16, accepted bool) {
				state, err := handshake(ctx, op.addr(s), version, nil)
				if accepted {
					Expect(err).NotTo(HaveOccurred())
					Expect(state.Version).To(Equal(version))
					AddReportEntry(fmt.Sprintf("%s %s", s, tls.VersionName(version)), "accepted")
					return
				}
				Expect(err).To(MatchError(ContainSubstring("protocol version")))
				AddReportEntry(fmt.Sprintf("%s %s", s, tls.VersionName(version)), "refused: "+err.Error())
			},
			tlsVersionEntries(),
		)

		DescribeTable("HTTP/2",
			func(ctx SpecContext, withHTTP2 bool, s server, want string) {
				o := op
				if withHTTP2 {
					o = http2
				}
				// A client that prefers h2, as Go's and most others do.
				state, err := handshake(ctx, o.addr(s), tls.VersionTLS13, []string{"h2", "http/1.1"})
				Expect(err).NotTo(HaveOccurred())
				Expect(state.NegotiatedProtocol).To(Equal(want))
			},
			Entry("is off on the webhook server by default: http/1.1 is negotiated", false, webhookServer, "http/1.1"),
			Entry("is off on the metrics server by default: http/1.1 is negotiated", false, metricsServer, "http/1.1"),
			Entry("is on on the webhook server with --enable-http2", true, webhookServer, "h2"),
			Entry("is on on the metrics server with --enable-http2", true, metricsServer, "h2"),
		)
	})
}
