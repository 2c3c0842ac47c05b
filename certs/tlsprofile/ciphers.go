package tlsprofile

import (
	"crypto/tls"
	"slices"
)

// opensslToIANA maps the OpenSSL cipher names OpenShift's profiles use (and
// the other TLS 1.2 suites Go implements, so that a Custom profile can name
// any of them) to their IANA names, which crypto/tls knows them by. Some of
// these Go does not implement (DHE key exchange, CBC with SHA-384, ...): a
// server cannot offer them, so they select nothing; the test lists them.
var opensslToIANA = map[string]string{
	"ECDHE-ECDSA-AES128-GCM-SHA256": "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
	"ECDHE-RSA-AES128-GCM-SHA256":   "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
	"ECDHE-ECDSA-AES256-GCM-SHA384": "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
	"ECDHE-RSA-AES256-GCM-SHA384":   "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
	"ECDHE-ECDSA-CHACHA20-POLY1305": "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
	"ECDHE-RSA-CHACHA20-POLY1305":   "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
	"DHE-RSA-AES128-GCM-SHA256":     "TLS_DHE_RSA_WITH_AES_128_GCM_SHA256",
	"DHE-RSA-AES256-GCM-SHA384":     "TLS_DHE_RSA_WITH_AES_256_GCM_SHA384",
	"DHE-RSA-CHACHA20-POLY1305":     "TLS_DHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
	"ECDHE-ECDSA-AES128-SHA256":     "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256",
	"ECDHE-RSA-AES128-SHA256":       "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256",
	"ECDHE-ECDSA-AES128-SHA":        "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA",
	"ECDHE-RSA-AES128-SHA":          "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA",
	"ECDHE-ECDSA-AES256-SHA384":     "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA384",
	"ECDHE-RSA-AES256-SHA384":       "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA384",
	"ECDHE-ECDSA-AES256-SHA":        "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA",
	"ECDHE-RSA-AES256-SHA":          "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA",
	"DHE-RSA-AES128-SHA256":         "TLS_DHE_RSA_WITH_AES_128_CBC_SHA256",
	"DHE-RSA-AES256-SHA256":         "TLS_DHE_RSA_WITH_AES_256_CBC_SHA256",
	"AES128-GCM-SHA256":             "TLS_RSA_WITH_AES_128_GCM_SHA256",
	"AES256-GCM-SHA384":             "TLS_RSA_WITH_AES_256_GCM_SHA384",
	"AES128-SHA256":                 "TLS_RSA_WITH_AES_128_CBC_SHA256",
	"AES256-SHA256":                 "TLS_RSA_WITH_AES_256_CBC_SHA256",
	"AES128-SHA":                    "TLS_RSA_WITH_AES_128_CBC_SHA",
	"AES256-SHA":                    "TLS_RSA_WITH_AES_256_CBC_SHA",
	"DES-CBC3-SHA":                  "TLS_RSA_WITH_3DES_EDE_CBC_SHA",
	"ECDHE-RSA-DES-CBC3-SHA":        "TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA",
	"RC4-SHA":                       "TLS_RSA_WITH_RC4_128_SHA",
	"ECDHE-ECDSA-RC4-SHA":           "TLS_ECDHE_ECDSA_WITH_RC4_128_SHA",
	"ECDHE-RSA-RC4-SHA":             "TLS_ECDHE_RSA_WITH_RC4_128_SHA",
}

// goSuites are the suites crypto/tls implements, by IANA name, insecure ones
// included: a profile that names one (Old does) gets it, as OpenShift's own
// Go servers do.
var goSuites = func() map[string]*tls.CipherSuite {
	m := map[string]*tls.CipherSuite{}
	for _, s := range append(tls.CipherSuites(), tls.InsecureCipherSuites()...) {
		m[s.Name] = s
	}
	return m
}()

// isTLS13Suite says whether name is a TLS 1.3 suite, which Go always offers
// and never lets a server choose.
func isTLS13Suite(name string) bool {
	s, ok := goSuites[name]
	return ok && slices.Equal(s.SupportedVersions, []uint16{tls.VersionTLS13})
}

// goCipherSuites are the crypto/tls suites (TLS 1.2 and older) that names,
// in OpenSSL's or IANA's form, select; never nil, so that a profile that
// selects none offers none rather than Go's defaults. ignored are the names
// that select nothing: unknown, or not implemented by Go. TLS 1.3 names are
// neither: Go offers those suites whatever the list says.
func goCipherSuites(names []string) (suites []uint16, ignored []string) {
	suites = []uint16{}
	for _, name := range names {
		if isTLS13Suite(name) {
			continue
		}
		iana := name
		if n, ok := opensslToIANA[name]; ok {
			iana = n
		}
		s, ok := goSuites[iana]
		if !ok {
			ignored = append(ignored, name)
			continue
		}
		if !slices.Contains(suites, s.ID) {
			suites = append(suites, s.ID)
		}
	}
	return suites, ignored
}
