package tlsprofile

import (
	"strings"
	"testing"

	configv1 "github.com/openshift/api/config/v1"
)

func TestFromSecurityProfile(t *testing.T) {
	custom := &configv1.TLSSecurityProfile{Type: configv1.TLSProfileCustomType, Custom: &configv1.CustomTLSProfile{
		TLSProfileSpec: configv1.TLSProfileSpec{MinTLSVersion: configv1.VersionTLS12, Ciphers: []string{"ECDHE-RSA-AES256-GCM-SHA384"}}}}
	for _, tc := range []struct {
		name        string
		profile     *configv1.TLSSecurityProfile
		wantMin     configv1.TLSProtocolVersion
		wantCiphers string
	}{
		{"none set", nil, configv1.VersionTLS12, intermediateCiphers},
		{"empty type", &configv1.TLSSecurityProfile{}, configv1.VersionTLS12, intermediateCiphers},
		{"intermediate", &configv1.TLSSecurityProfile{Type: configv1.TLSProfileIntermediateType}, configv1.VersionTLS12, intermediateCiphers},
		{"modern", &configv1.TLSSecurityProfile{Type: configv1.TLSProfileModernType}, configv1.VersionTLS13, ""},
		{"old", &configv1.TLSSecurityProfile{Type: configv1.TLSProfileOldType}, configv1.VersionTLS10, ""},
		{"custom", custom, configv1.VersionTLS12, "ECDHE-RSA-AES256-GCM-SHA384"},
		{"custom without settings", &configv1.TLSSecurityProfile{Type: configv1.TLSProfileCustomType}, configv1.VersionTLS12, intermediateCiphers},
		{"unknown type", &configv1.TLSSecurityProfile{Type: "Paranoid"}, configv1.VersionTLS12, intermediateCiphers},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := FromSecurityProfile(tc.profile)
			if p.MinVersion != tc.wantMin {
				t.Errorf("MinVersion = %s, want %s", p.MinVersion, tc.wantMin)
			}
			// Old's list is long; its TLS 1.3 suites must be gone from it.
			if got := p.OpenSSLCiphers(); tc.wantCiphers != "" && got != tc.wantCiphers {
				t.Errorf("OpenSSLCiphers() = %q, want %q", got, tc.wantCiphers)
			}
		})
	}
	if got := FromSecurityProfile(&configv1.TLSSecurityProfile{Type: configv1.TLSProfileOldType}).OpenSSLCiphers(); got == "" || containsTLS13(got) {
		t.Errorf("Old's OpenSSL ciphers = %q: want its TLS 1.2 ciphers only", got)
	}
}

// intermediateCiphers is OpenShift's Intermediate profile, TLS 1.2 part.
const intermediateCiphers = "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:" +
	"ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305:" +
	"DHE-RSA-AES128-GCM-SHA256:DHE-RSA-AES256-GCM-SHA384"

func containsTLS13(list string) bool {
	return strings.Contains(list, "TLS_AES_128_GCM_SHA256") || strings.Contains(list, "TLS_CHACHA20_POLY1305_SHA256")
}
