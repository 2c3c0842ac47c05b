package tlsprofile

import (
	"crypto/tls"
	"slices"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
	configv1 "github.com/openshift/api/config/v1"
)

// notInGo are the OpenSSL names of the table that crypto/tls does not
// implement: a Go server cannot offer them whatever a profile says.
var notInGo = []string{
	"AES256-SHA256",             // TLS_RSA_WITH_AES_256_CBC_SHA256
	"DHE-RSA-AES128-GCM-SHA256", // no finite-field DHE in Go
	"DHE-RSA-AES128-SHA256",
	"DHE-RSA-AES256-GCM-SHA384",
	"DHE-RSA-AES256-SHA256",
	"DHE-RSA-CHACHA20-POLY1305",
	"ECDHE-ECDSA-AES256-SHA384", // no CBC with SHA-384 in Go
	"ECDHE-RSA-AES256-SHA384",
}

// Every cipher of OpenShift's predefined profiles is a TLS 1.3 suite, maps
// to a crypto/tls suite, or is listed as one Go does not implement; and
// the list is exact, so a Go that implements one more fails here.
func TestProfileCiphersMapToGo(t *testing.T) {
	for typ, spec := range configv1.TLSProfiles {
		for _, name := range spec.Ciphers {
			iana, inTable := opensslToIANA[name]
			switch {
			case isTLS13Suite(name):
			case !inTable:
				t.Errorf("%s profile: cipher %s is not in the OpenSSL table", typ, name)
			case goSuites[iana] == nil && !slices.Contains(notInGo, name):
				t.Errorf("%s profile: %s (%s) is not implemented by Go, and not listed in notInGo", typ, name, iana)
			}
		}
	}
	var missing []string
	for openssl, iana := range opensslToIANA {
		if goSuites[iana] == nil {
			missing = append(missing, openssl)
		} else if !slices.Contains(goSuites[iana].SupportedVersions, tls.VersionTLS12) &&
			!slices.Contains(goSuites[iana].SupportedVersions, tls.VersionTLS10) {
			t.Errorf("%s maps to %s, not a TLS 1.2-or-older suite", openssl, iana)
		}
	}
	sort.Strings(missing)
	if diff := cmp.Diff(notInGo, missing); diff != "" {
		t.Errorf("the table's names Go does not implement (-notInGo +found):\n%s", diff)
	}
}

func TestGoCipherSuites(t *testing.T) {
	for _, tc := range []struct {
		name        string
		ciphers     []string
		want        []uint16
		wantIgnored []string
	}{
		{name: "Intermediate keeps its ECDHE suites, ignores its DHE ones",
			ciphers: configv1.TLSProfiles[configv1.TLSProfileIntermediateType].Ciphers,
			want: []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
				tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384, tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
				tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256, tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256},
			wantIgnored: []string{"DHE-RSA-AES128-GCM-SHA256", "DHE-RSA-AES256-GCM-SHA384"}},
		{name: "Modern has none for TLS 1.2, and is not Go's defaults",
			ciphers: configv1.TLSProfiles[configv1.TLSProfileModernType].Ciphers, want: []uint16{}},
		{name: "IANA names too, once each, unknown ones ignored",
			ciphers:     []string{"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "ECDHE-RSA-AES128-GCM-SHA256", "NOT-A-CIPHER"},
			want:        []uint16{tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256},
			wantIgnored: []string{"NOT-A-CIPHER"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ignored := goCipherSuites(tc.ciphers)
			if got == nil {
				t.Fatal("nil suites: a server would offer Go's defaults")
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("suites (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantIgnored, ignored); diff != "" {
				t.Errorf("ignored (-want +got):\n%s", diff)
			}
		})
	}
}
