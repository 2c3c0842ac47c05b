// Package tlsprofile reads the TLS security profile an OpenShift cluster
// asks its servers to follow (the APIServer "cluster" object's
// spec.tlsSecurityProfile) and turns it into the minimum version and
// ciphers a server is configured with. Where the cluster does not serve
// that API, the profile is Intermediate, OpenShift's own default.
//
// Memcached pods take the profile as OpenSSL's cipher list
// ([Profile.OpenSSLCiphers]). The operator's own Go servers (webhooks,
// metrics) take it through a [Serving], which maps OpenShift's cipher names
// to crypto/tls suites and applies the current profile to every new TLS
// handshake; a [Follower] keeps it current from a watch of the APIServer,
// so a change of the profile needs no restart:
//
//	serving := tlsprofile.NewServing(overrides) // from --tls-min-version, --tls-cipher-suites
//	metricsOpts.TLSOpts = append(metricsOpts.TLSOpts, serving.ConfigureTLS)
//	// ... once the manager exists, where the APIServer API is served:
//	p, err := tlsprofile.Read(ctx, mgr.GetAPIReader())
//	serving.Set(p)
//	err = mgr.Add(tlsprofile.Follower{Serving: serving, Informers: mgr.GetCache()})
//
// Go does not let a server choose its TLS 1.3 suites (all three are always
// on, and all are strong), so a profile's TLS 1.3 names select nothing; a
// profile's minimum version does decide whether TLS 1.2 is offered at all.
// Go also orders the suites itself, so a profile's order is not kept.
package tlsprofile
