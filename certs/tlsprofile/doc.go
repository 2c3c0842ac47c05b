// Package tlsprofile reads the TLS security profile an OpenShift cluster
// asks its servers to follow (the APIServer "cluster" object's
// spec.tlsSecurityProfile) and turns it into the minimum version and
// ciphers a server is configured with. Where the cluster does not serve
// that API, the profile is Intermediate, OpenShift's own default.
package tlsprofile
