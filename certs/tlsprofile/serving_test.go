package tlsprofile

import (
	"context"
	"crypto/tls"
	"slices"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	configv1 "github.com/openshift/api/config/v1"

	"github.com/example-inc/memcached-operator/certs/certstest"
)

// Clients a profile is told by: one that stops at TLS 1.2 (offering Go's
// default suites), one that offers only a CBC suite that Old has and
// Intermediate has not, and one of TLS 1.0, which only Old admits.
var (
	tls12Client    = certstest.Offer{MaxVersion: tls.VersionTLS12}
	tls12CBCClient = certstest.Offer{MaxVersion: tls.VersionTLS12, CipherSuites: []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA}}
	tls10Client    = certstest.Offer{MaxVersion: tls.VersionTLS10, CipherSuites: []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA}}
	tls13Client    = certstest.Offer{}
)

// customCiphers is a Custom profile's list, and outsideCustom a TLS 1.2
// client offering only suites outside it.
var (
	customCiphers = []string{"ECDHE-ECDSA-AES256-GCM-SHA384", "ECDHE-ECDSA-CHACHA20-POLY1305"}
	outsideCustom = certstest.Offer{MaxVersion: tls.VersionTLS12,
		CipherSuites: []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA}}
)

func profileOf(typ configv1.TLSProfileType) Profile {
	if typ == configv1.TLSProfileCustomType {
		return FromSecurityProfile(&configv1.TLSSecurityProfile{Type: typ, Custom: &configv1.CustomTLSProfile{
			TLSProfileSpec: configv1.TLSProfileSpec{MinTLSVersion: configv1.VersionTLS12, Ciphers: customCiphers}}})
	}
	return FromSecurityProfile(&configv1.TLSSecurityProfile{Type: typ})
}

// A server configured by a Serving takes each profile's versions and
// ciphers, in real handshakes, and a Set applies to the next handshake.
func TestServingFollowsProfile(t *testing.T) {
	s := NewServing(Overrides{})
	addr := startServer(t, s)
	for _, tc := range []struct {
		profile  configv1.TLSProfileType
		accepted []certstest.Offer
		refused  []certstest.Offer
	}{
		{profile: configv1.TLSProfileOldType, accepted: []certstest.Offer{tls12Client, tls12CBCClient, tls10Client, tls13Client}},
		{profile: configv1.TLSProfileIntermediateType, accepted: []certstest.Offer{tls12Client, tls13Client},
			refused: []certstest.Offer{tls12CBCClient, tls10Client}},
		{profile: configv1.TLSProfileModernType, accepted: []certstest.Offer{tls13Client},
			refused: []certstest.Offer{tls12Client, tls12CBCClient, tls10Client}},
		{profile: configv1.TLSProfileCustomType, accepted: []certstest.Offer{tls12Client, tls13Client},
			refused: []certstest.Offer{outsideCustom, tls12CBCClient, tls10Client}},
		// Back to Intermediate: a Set is not one-way.
		{profile: configv1.TLSProfileIntermediateType, accepted: []certstest.Offer{tls12Client},
			refused: []certstest.Offer{tls12CBCClient}},
	} {
		s.Set(profileOf(tc.profile))
		for _, o := range tc.accepted {
			st, err := certstest.Handshake(context.Background(), addr, o)
			if err != nil {
				t.Errorf("%s: a client offering %s refused: %v", tc.profile, describe(o), err)
				continue
			}
			if tc.profile == configv1.TLSProfileCustomType && st.Version == tls.VersionTLS12 &&
				!slices.Contains(customCiphers, opensslName(st.CipherSuite)) {
				t.Errorf("Custom: negotiated %s, not one of %v", tls.CipherSuiteName(st.CipherSuite), customCiphers)
			}
		}
		for _, o := range tc.refused {
			if st, err := certstest.Handshake(context.Background(), addr, o); err == nil {
				t.Errorf("%s: a client offering %s accepted with %s %s", tc.profile, describe(o),
					tls.VersionName(st.Version), tls.CipherSuiteName(st.CipherSuite))
			}
		}
	}
}

// Overrides win over the profile: a TLS 1.3 minimum over Intermediate, a
// suite list over Old.
func TestServingOverrides(t *testing.T) {
	g := NewWithT(t)
	o, err := ParseOverrides("VersionTLS13", "")
	g.Expect(err).NotTo(HaveOccurred())
	addr := startServer(t, NewServing(o))
	if _, err := certstest.Handshake(context.Background(), addr, tls12Client); err == nil {
		t.Error("--tls-min-version=VersionTLS13 over Intermediate: a TLS 1.2 client accepted")
	}

	o, err = ParseOverrides("", "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA")
	g.Expect(err).NotTo(HaveOccurred())
	s := NewServing(o)
	s.Set(profileOf(configv1.TLSProfileOldType))
	addr = startServer(t, s)
	st, err := certstest.Handshake(context.Background(), addr, tls12Client)
	if err != nil || st.CipherSuite != tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384 {
		t.Errorf("--tls-cipher-suites over Old: got %s, %v; want TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
			tls.CipherSuiteName(st.CipherSuite), err)
	}
	onlyOldsAES128GCM := certstest.Offer{MaxVersion: tls.VersionTLS12, CipherSuites: []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256}}
	if _, err := certstest.Handshake(context.Background(), addr, onlyOldsAES128GCM); err == nil {
		t.Error("--tls-cipher-suites over Old: a client offering only a suite of Old's outside the flag's list accepted")
	}
	if _, err := certstest.Handshake(context.Background(), addr, tls10Client); err != nil {
		t.Errorf("--tls-cipher-suites alone keeps Old's TLS 1.0 minimum, yet a TLS 1.0 client was refused: %v", err)
	}
}

func TestParseOverrides(t *testing.T) {
	for _, tc := range []struct {
		minVersion, suites string
		wantErr            string
		want               Overrides
	}{
		{want: Overrides{}},
		{minVersion: "VersionTLS12", suites: "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
			want: Overrides{MinVersion: tls.VersionTLS12,
				CipherSuites: []uint16{tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256}}},
		{minVersion: "TLS12", wantErr: `min version "TLS12": want one of VersionTLS10, VersionTLS11, VersionTLS12, VersionTLS13`},
		{suites: "ECDHE-RSA-AES128-GCM-SHA256", wantErr: "Cipher suite ECDHE-RSA-AES128-GCM-SHA256 not supported"},
		{suites: "TLS_AES_128_GCM_SHA256", wantErr: "is a TLS 1.3 suite"},
		{minVersion: "VersionTLS13", suites: "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", wantErr: "no effect with a TLS 1.3 minimum"},
	} {
		got, err := ParseOverrides(tc.minVersion, tc.suites)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("ParseOverrides(%q, %q) error = %v, want one containing %q", tc.minVersion, tc.suites, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got.MinVersion != tc.want.MinVersion || !slices.Equal(got.CipherSuites, tc.want.CipherSuites) {
			t.Errorf("ParseOverrides(%q, %q) = %+v, %v; want %+v", tc.minVersion, tc.suites, got, err, tc.want)
		}
	}
}

// startServer serves TLS handshakes on loopback with an ECDSA certificate,
// configured by s as the operator's servers are.
func startServer(t *testing.T, s *Serving) string {
	t.Helper()
	cert, err := certstest.NewTestCA(t).IssueLoopback(t, certstest.CertOptions{}).TLSCertificate()
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}}
	s.ConfigureTLS(cfg)
	return certstest.ServeTLS(t, cfg)
}

func describe(o certstest.Offer) string {
	v := "TLS 1.3"
	if o.MaxVersion != 0 {
		v = tls.VersionName(o.MaxVersion)
	}
	if o.CipherSuites == nil {
		return "up to " + v + " with Go's default suites"
	}
	names := make([]string, len(o.CipherSuites))
	for i, id := range o.CipherSuites {
		names[i] = tls.CipherSuiteName(id)
	}
	return "up to " + v + " with " + strings.Join(names, ",")
}

// opensslName is the table's OpenSSL name of a crypto/tls suite.
func opensslName(id uint16) string {
	for openssl, iana := range opensslToIANA {
		if iana == tls.CipherSuiteName(id) {
			return openssl
		}
	}
	return tls.CipherSuiteName(id)
}
