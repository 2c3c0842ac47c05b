package operand

import (
	"strconv"
	"strings"

	configv1 "github.com/openshift/api/config/v1"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
	"github.com/example-inc/memcached-operator/certs/tlsprofile"
)

// Where a pod that serves TLS keeps its Secret, and the ports that stay on
// loopback beside the TLS client port.
const (
	// TLSDir is the Secret volume's mount point: tls.crt, tls.key, ca.crt.
	TLSDir = "/etc/memcached/tls"
	// AdminPort is memcached's plain-text listener, bound to 127.0.0.1 only:
	// what runs in the pod (the certificate refresh, the readiness check, a
	// metrics exporter) speaks to memcached without a certificate of its own.
	AdminPort = 11212
	// HealthPort is where the TLS sidecar answers the readiness probe: a TCP
	// probe of the TLS port would count as a failed handshake each time.
	HealthPort = 11213
)

// TLS is how memcached serves TLS.
type TLS struct {
	// MinVersion is the oldest version accepted, in OpenShift's names.
	MinVersion configv1.TLSProtocolVersion
	// Ciphers is an OpenSSL cipher list for TLS 1.2 and older; empty keeps
	// OpenSSL's default.
	Ciphers string
	// ClientCertificates requires clients to present a certificate that the
	// Secret's ca.crt signs.
	ClientCertificates bool
}

// TLSFromSpec is how the pods of spec serve TLS under the cluster's
// profile, nil when spec has no TLS. The spec's minimum wins over the
// profile's; the ciphers always follow the profile.
func TLSFromSpec(spec *cachev1.MemcachedSpec, cluster tlsprofile.Profile) *TLS {
	if spec.TLS == nil {
		return nil
	}
	t := &TLS{
		MinVersion:         cluster.MinVersion,
		Ciphers:            cluster.OpenSSLCiphers(),
		ClientCertificates: spec.TLS.ClientCertificates == cachev1.ClientCertificatesRequired,
	}
	if spec.TLS.MinVersion != "" {
		t.MinVersion = configv1.TLSProtocolVersion(spec.TLS.MinVersion)
	}
	return t
}

// sslMinVersion is memcached's number for a version: 0 for TLS 1.0 up to 3
// for TLS 1.3.
var sslMinVersion = map[configv1.TLSProtocolVersion]int{
	configv1.VersionTLS10: 0,
	configv1.VersionTLS11: 1,
	configv1.VersionTLS12: 2,
	configv1.VersionTLS13: 3,
}

// args are memcached's options for t: TLS on every listener but the
// loopback one. Options memcached would read as another -o option (a
// comma) cannot occur: cipher lists are colon-separated.
func (t TLS) args() []string {
	v, ok := sslMinVersion[t.MinVersion]
	if !ok {
		v = sslMinVersion[configv1.VersionTLS12]
	}
	opts := []string{
		"ssl_chain_cert=" + TLSDir + "/tls.crt",
		"ssl_key=" + TLSDir + "/tls.key",
		"ssl_min_version=" + strconv.Itoa(v),
	}
	if t.ClientCertificates {
		// 2: require a certificate and verify it (SSL_VERIFY_PEER |
		// SSL_VERIFY_FAIL_IF_NO_PEER_CERT).
		opts = append(opts, "ssl_ca_cert="+TLSDir+"/ca.crt", "ssl_verify_mode=2")
	}
	if t.Ciphers != "" {
		opts = append(opts, "ssl_ciphers="+t.Ciphers)
	}
	return []string{
		"--enable-ssl",
		"--listen=*,notls:127.0.0.1:" + strconv.Itoa(AdminPort),
		"--extended=" + strings.Join(opts, ","),
	}
}
