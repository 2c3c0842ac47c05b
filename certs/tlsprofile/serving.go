package tlsprofile

import (
	"crypto/tls"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"

	cliflag "k8s.io/component-base/cli/flag"
)

// Overrides are an administrator's own choices, which win over the
// cluster's profile: kube-apiserver's --tls-min-version and
// --tls-cipher-suites, in its forms.
type Overrides struct {
	// MinVersion is a crypto/tls version; 0 follows the profile.
	MinVersion uint16
	// CipherSuites are crypto/tls suites for TLS 1.2 and older; nil
	// follows the profile.
	CipherSuites []uint16
}

// ParseOverrides reads minVersion (VersionTLS10 to VersionTLS13) and
// cipherSuites (IANA names, comma separated, as crypto/tls names them);
// either may be empty, to follow the profile. It refuses what would have no
// effect rather than ignore it: TLS 1.3 suites, which Go does not let a
// server choose, and suites together with a TLS 1.3 minimum.
func ParseOverrides(minVersion, cipherSuites string) (Overrides, error) {
	var o Overrides
	if minVersion != "" {
		v, err := cliflag.TLSVersion(minVersion)
		if err != nil {
			return o, fmt.Errorf("min version %q: want one of %s", minVersion, strings.Join(cliflag.TLSPossibleVersions(), ", "))
		}
		o.MinVersion = v
	}
	if cipherSuites == "" {
		return o, nil
	}
	names := strings.Split(cipherSuites, ",")
	for i, name := range names {
		names[i] = strings.TrimSpace(name)
		if isTLS13Suite(names[i]) {
			return o, fmt.Errorf("cipher suite %s is a TLS 1.3 suite, which Go servers always offer and cannot choose", names[i])
		}
	}
	suites, err := cliflag.TLSCipherSuites(names)
	if err != nil {
		return o, fmt.Errorf("%w; known suites: %s", err, strings.Join(cliflag.TLSCipherPossibleValues(), ", "))
	}
	if o.MinVersion == tls.VersionTLS13 {
		return o, errors.New("cipher suites have no effect with a TLS 1.3 minimum: Go does not let a server choose TLS 1.3 suites")
	}
	o.CipherSuites = suites
	return o, nil
}

// String says which parts the overrides set, for the log.
func (o Overrides) String() string {
	var parts []string
	if o.MinVersion != 0 {
		parts = append(parts, "min "+tls.VersionName(o.MinVersion))
	}
	if o.CipherSuites != nil {
		parts = append(parts, "ciphers ["+suiteNames(o.CipherSuites)+"]")
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// Settings are what a server accepts in a handshake.
type Settings struct {
	MinVersion uint16
	// CipherSuites for TLS 1.2 and older; never nil (an empty list offers
	// none of them). TLS 1.3's suites are always Go's three.
	CipherSuites []uint16
}

// String names the settings as crypto/tls does, for the log.
func (s Settings) String() string {
	return fmt.Sprintf("min %s, ciphers [%s]", tls.VersionName(s.MinVersion), suiteNames(s.CipherSuites))
}

func suiteNames(ids []uint16) string {
	names := make([]string, len(ids))
	for i, id := range ids {
		names[i] = tls.CipherSuiteName(id)
	}
	return strings.Join(names, " ")
}

func (s Settings) equal(o Settings) bool {
	return s.MinVersion == o.MinVersion && slices.Equal(s.CipherSuites, o.CipherSuites)
}

// Serving holds the settings of the operator's servers: the current
// profile with the overrides applied. Set may be called at any time; each
// new handshake uses the settings of that moment, and connections already
// made keep theirs.
type Serving struct {
	overrides Overrides
	current   atomic.Pointer[Settings]
}

// NewServing returns a Serving of the Intermediate profile, the one
// followed until Set says otherwise.
func NewServing(o Overrides) *Serving {
	s := &Serving{overrides: o}
	s.Set(Intermediate())
	return s
}

// Set makes p the profile of new handshakes, under the overrides. It
// returns the settings, whether they changed, and p's cipher names that
// select nothing (unknown, or not implemented by Go).
func (s *Serving) Set(p Profile) (now Settings, changed bool, ignored []string) {
	now.CipherSuites, ignored = goCipherSuites(p.Ciphers)
	v, err := cliflag.TLSVersion(string(p.MinVersion))
	if err != nil {
		// Not one of OpenShift's names, which its API admits alone.
		v = tls.VersionTLS12
		ignored = append(ignored, string(p.MinVersion))
	}
	now.MinVersion = v
	if s.overrides.MinVersion != 0 {
		now.MinVersion = s.overrides.MinVersion
	}
	if s.overrides.CipherSuites != nil {
		now.CipherSuites = slices.Clone(s.overrides.CipherSuites)
	}
	before := s.current.Swap(&now)
	return now, before == nil || !before.equal(now), ignored
}

// Settings are the settings of a handshake started now.
func (s *Serving) Settings() Settings { return *s.current.Load() }

// ConfigureTLS is a server's TLSOpts entry: every handshake uses the
// settings current when it starts, served by a copy of c as it is then
// (its certificate, protocols) with the settings applied. No other option
// may set c.GetConfigForClient.
func (s *Serving) ConfigureTLS(c *tls.Config) {
	s.Settings().apply(c)
	c.GetConfigForClient = func(*tls.ClientHelloInfo) (*tls.Config, error) {
		hc := c.Clone()
		hc.GetConfigForClient = nil
		s.Settings().apply(hc)
		return hc, nil
	}
}

func (s Settings) apply(c *tls.Config) {
	c.MinVersion = s.MinVersion
	c.CipherSuites = slices.Clone(s.CipherSuites)
}
