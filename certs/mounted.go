package certs

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"

	"sigs.k8s.io/controller-runtime/pkg/certwatcher"
)

// MountedSource serves the certificate in a directory that something else
// keeps up to date: tls.crt and tls.key of a Secret volume. It reads them at
// start, watches them, and presents the new certificate from the next TLS
// handshake on when they change, so a renewal needs no restart.
//
// Kubelet updates a Secret volume by writing the new files into a new
// directory and swapping a symlink (..data) to it; certwatcher follows the
// files through the swap, and also rereads them every ten seconds.
type MountedSource struct {
	dir     string
	watcher *certwatcher.CertWatcher
}

var _ Source = &MountedSource{}

// NewMounted reads tls.crt and tls.key in dir. It fails when they are
// missing or do not make a key pair.
func NewMounted(dir string) (*MountedSource, error) {
	if dir == "" {
		return nil, errors.New("mounted certificate: no directory")
	}
	w, err := certwatcher.New(filepath.Join(dir, CertFile), filepath.Join(dir, KeyFile))
	if err != nil {
		return nil, fmt.Errorf("mounted certificate in %s (want %s and %s, as in a kubernetes.io/tls Secret): %w",
			dir, CertFile, KeyFile, err)
	}
	return &MountedSource{dir: dir, watcher: w}, nil
}

// Dir is the directory the certificate is read from.
func (s *MountedSource) Dir() string { return s.dir }

// ConfigureTLS implements Source.
func (s *MountedSource) ConfigureTLS(c *tls.Config) { c.GetCertificate = s.watcher.GetCertificate }

// Start implements Source: it watches the files until ctx is done.
func (s *MountedSource) Start(ctx context.Context) error { return s.watcher.Start(ctx) }

// NeedLeaderElection implements Source.
func (s *MountedSource) NeedLeaderElection() bool { return false }

// Ready implements Source: NewMounted has already loaded a valid
// certificate, and the watcher only ever swaps in another valid one.
func (s *MountedSource) Ready(*http.Request) error { return nil }
