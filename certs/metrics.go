package certs

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
)

// NewMetricsSource returns the metrics server's Source. With a directory
// (--metrics-cert-path; config/default mounts cert-manager's metrics-server-cert
// Secret there) it is a MountedSource, so scrapers can verify the endpoint
// against cert-manager's CA and renewals need no restart. Without one it
// leaves GetCertificate unset, and controller-runtime's metrics server
// generates a self-signed certificate at start: what an OLM install gets, as
// OLM provides no metrics certificate.
func NewMetricsSource(dir string) (Source, error) {
	if dir == "" {
		return selfSigned{}, nil
	}
	s, err := NewMounted(dir)
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	return s, nil
}

// selfSigned is the fallback: controller-runtime makes the certificate.
type selfSigned struct{}

func (selfSigned) ConfigureTLS(*tls.Config)        {}
func (selfSigned) Start(ctx context.Context) error { return nil }
func (selfSigned) NeedLeaderElection() bool        { return false }
func (selfSigned) Ready(*http.Request) error       { return nil }
