package certs

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/util/wait"
	certutil "k8s.io/client-go/util/cert"
)

// awaitedPoll is how often an empty metrics certificate directory is looked
// at again. Kubelet fills an optional Secret volume at its next sync of the
// pod, about a minute after the Secret appears, so a few seconds more cost
// nothing.
const awaitedPoll = 5 * time.Second

// NewMetricsSource returns the metrics server's Source.
//
//   - Without a directory (no --metrics-cert-path) it leaves GetCertificate
//     unset, and controller-runtime's metrics server generates a self-signed
//     certificate at start.
//   - With a directory holding tls.crt and tls.key (config/default mounts
//     cert-manager's metrics-server-cert Secret there) it is a MountedSource,
//     so scrapers can verify the endpoint and renewals need no restart.
//   - With an existing directory that holds nothing (kubelet's atomic
//     writer leaves only its dot-entries, ..data and a timestamped
//     directory, in the volume of a missing optional Secret) it serves a
//     self-signed certificate until tls.crt and tls.key appear, then theirs.
//     That is the bundle's optional mount of the Secret OpenShift's service
//     CA writes for the metrics Service: on OpenShift it comes, elsewhere it
//     never does, and the operator must run either way. A directory that
//     does not exist, or holds other files, is a mistake, and an error.
func NewMetricsSource(dir string, log logr.Logger) (Source, error) {
	if dir == "" {
		return selfSigned{}, nil
	}
	s, err := NewMounted(dir)
	if err == nil {
		return s, nil
	}
	if empty, emptyErr := holdsNoFiles(dir); emptyErr != nil || !empty {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	return newAwaited(dir, log)
}

// holdsNoFiles tells whether dir is a directory with no entries but
// kubelet's dot-entries.
func holdsNoFiles(dir string) (bool, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false, err
	}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "..") {
			return false, nil
		}
	}
	return true, nil
}

// selfSigned is the fallback: controller-runtime makes the certificate.
type selfSigned struct{}

func (selfSigned) ConfigureTLS(*tls.Config)        {}
func (selfSigned) Start(ctx context.Context) error { return nil }
func (selfSigned) NeedLeaderElection() bool        { return false }
func (selfSigned) Ready(*http.Request) error       { return nil }

// awaitedSource serves its own self-signed certificate until a mounted one
// appears in dir, and the mounted one, renewals included, from then on.
type awaitedSource struct {
	dir      string
	log      logr.Logger
	fallback tls.Certificate
	mounted  atomic.Pointer[MountedSource]
}

func newAwaited(dir string, log logr.Logger) (*awaitedSource, error) {
	// The same certificate controller-runtime's metrics server makes for
	// itself, so a scraper sees no difference until the mounted one comes.
	certPEM, keyPEM, err := certutil.GenerateSelfSignedCertKey("localhost", []net.IP{net.IPv4(127, 0, 0, 1)}, nil)
	if err != nil {
		return nil, fmt.Errorf("metrics: self-signed certificate: %w", err)
	}
	fallback, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("metrics: self-signed certificate: %w", err)
	}
	return &awaitedSource{dir: dir, log: log, fallback: fallback}, nil
}

// ConfigureTLS implements Source.
func (s *awaitedSource) ConfigureTLS(c *tls.Config) { c.GetCertificate = s.getCertificate }

func (s *awaitedSource) getCertificate(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
	if m := s.mounted.Load(); m != nil {
		return m.watcher.GetCertificate(hello)
	}
	return &s.fallback, nil
}

// Start implements Source: it looks for the certificate every awaitedPoll
// until it loads, then watches it until ctx is done.
func (s *awaitedSource) Start(ctx context.Context) error {
	s.log.Info("no metrics certificate mounted yet; serving a self-signed one until it appears",
		"dir", s.dir, "files", []string{CertFile, KeyFile})
	var m *MountedSource
	err := wait.PollUntilContextCancel(ctx, awaitedPoll, true, func(context.Context) (bool, error) {
		var err error
		m, err = NewMounted(s.dir)
		// Not there yet, or half written: kubelet writes a Secret volume
		// in one swap, but a person might not.
		return err == nil, nil
	})
	if err != nil {
		// The condition never fails, so only a stopping manager ends the
		// poll early.
		return nil
	}
	s.mounted.Store(m)
	s.log.Info("serving the mounted metrics certificate", "dir", s.dir)
	return m.Start(ctx)
}

// NeedLeaderElection implements Source.
func (s *awaitedSource) NeedLeaderElection() bool { return false }

// Ready implements Source: the fallback serves from the start.
func (s *awaitedSource) Ready(*http.Request) error { return nil }
