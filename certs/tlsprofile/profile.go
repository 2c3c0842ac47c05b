package tlsprofile

import (
	"context"
	"fmt"
	"strings"

	configv1 "github.com/openshift/api/config/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ClusterAPIServer is the name of the one APIServer object of an OpenShift
// cluster, whose profile every server in the cluster follows.
const ClusterAPIServer = "cluster"

// Profile is the minimum TLS version and the ciphers a server accepts.
type Profile struct {
	// MinVersion is one of OpenShift's names, VersionTLS10 to VersionTLS13.
	MinVersion configv1.TLSProtocolVersion
	// Ciphers are the profile's cipher names: OpenSSL's names for TLS 1.2
	// and older, IANA's (TLS_...) for TLS 1.3, as OpenShift lists them.
	Ciphers []string
}

// Intermediate is OpenShift's default profile, and the one followed where
// no profile is set.
func Intermediate() Profile {
	return fromSpec(configv1.TLSProfiles[configv1.TLSProfileIntermediateType])
}

// FromSecurityProfile is the profile p selects: a predefined profile by its
// type, a Custom profile's own settings, and Intermediate when p is nil,
// has no type, or is Custom without settings (as OpenShift reads them).
func FromSecurityProfile(p *configv1.TLSSecurityProfile) Profile {
	if p == nil {
		return Intermediate()
	}
	switch p.Type {
	case configv1.TLSProfileCustomType:
		if p.Custom == nil {
			return Intermediate()
		}
		return fromSpec(&p.Custom.TLSProfileSpec)
	case configv1.TLSProfileOldType, configv1.TLSProfileIntermediateType, configv1.TLSProfileModernType:
		return fromSpec(configv1.TLSProfiles[p.Type])
	default:
		return Intermediate()
	}
}

func fromSpec(s *configv1.TLSProfileSpec) Profile {
	return Profile{MinVersion: s.MinTLSVersion, Ciphers: append([]string(nil), s.Ciphers...)}
}

// Read returns the cluster's profile, read through c: Intermediate when the
// APIServer API is not served or its object does not exist.
func Read(ctx context.Context, c client.Reader) (Profile, error) {
	as := &configv1.APIServer{}
	err := c.Get(ctx, client.ObjectKey{Name: ClusterAPIServer}, as)
	switch {
	case err == nil:
		return FromSecurityProfile(as.Spec.TLSSecurityProfile), nil
	case apierrors.IsNotFound(err) || meta.IsNoMatchError(err):
		return Intermediate(), nil
	default:
		return Profile{}, fmt.Errorf("reading the cluster's TLS security profile: %w", err)
	}
}

// OpenSSLCiphers are the profile's ciphers that OpenSSL's cipher list (TLS
// 1.2 and older) takes, joined with ":". TLS 1.3's suites are left out:
// OpenSSL configures them apart, and a list of only those is refused.
func (p Profile) OpenSSLCiphers() string {
	var names []string
	for _, c := range p.Ciphers {
		if !strings.HasPrefix(c, "TLS_") {
			names = append(names, c)
		}
	}
	return strings.Join(names, ":")
}

// Served reports whether the cluster serves OpenShift's APIServer API, read
// through discovery: a client reading it where it is not served fails.
func Served(dc discovery.DiscoveryInterface) (bool, error) {
	list, err := dc.ServerResourcesForGroupVersion(configv1.GroupVersion.String())
	switch {
	case apierrors.IsNotFound(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("discovering %s: %w", configv1.GroupVersion, err)
	}
	for _, r := range list.APIResources {
		if r.Name == "apiservers" {
			return true, nil
		}
	}
	return false, nil
}
