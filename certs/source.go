package certs

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// Source is where a server's serving certificate comes from.
type Source interface {
	// ConfigureTLS makes a server present the source's current certificate,
	// by setting GetCertificate. Pass it as one of the server's TLSOpts. A
	// source that leaves GetCertificate unset lets controller-runtime choose.
	ConfigureTLS(*tls.Config)

	// Ready is a readiness check (a healthz.Checker): nil once the
	// servers using the source can be called as configured. The manager's
	// /readyz includes it, so kubelet, OLM and tests route to the operator
	// only then.
	Ready(*http.Request) error

	// Start keeps the certificate, and whatever depends on it, current
	// until ctx is done. Add the source to the manager, which starts it.
	manager.Runnable

	// NeedLeaderElection is false for every source: each replica serves,
	// so each keeps its own certificate current.
	manager.LeaderElectionRunnable
}

// The file names in a certificate directory: those of a kubernetes.io/tls
// Secret, which is what cert-manager writes and OLM mounts.
const (
	CertFile = "tls.crt"
	KeyFile  = "tls.key"
	CAFile   = "ca.crt"
)

// DefaultMountedDir is where config/default mounts cert-manager's Secret and
// where OLM mounts its webhook certificate (controller-runtime's default
// certificate directory, with /tmp as the container's temporary directory).
const DefaultMountedDir = "/tmp/k8s-webhook-server/serving-certs"

// Mode says where the webhook server's certificate comes from.
type Mode string

const (
	// ModeMounted serves the certificate files in a directory and reloads
	// them when they change. For the operator running in the cluster.
	ModeMounted Mode = "mounted"
	// ModeLocal generates a CA and a certificate for 127.0.0.1 and points
	// the webhook configurations at this host. For `make run`.
	ModeLocal Mode = "local"
)

// Modes lists the valid modes, for flag help and errors.
func Modes() []Mode { return []Mode{ModeMounted, ModeLocal} }

// ParseMode checks a --webhook-cert-mode value.
func ParseMode(s string) (Mode, error) {
	for _, m := range Modes() {
		if Mode(s) == m {
			return m, nil
		}
	}
	names := make([]string, 0, len(Modes()))
	for _, m := range Modes() {
		names = append(names, string(m))
	}
	return "", fmt.Errorf("unknown webhook certificate mode %q: want one of %s", s, strings.Join(names, ", "))
}

// WebhookOptions configures the webhook server's Source.
type WebhookOptions struct {
	// Mode picks the source. Defaults to ModeMounted.
	Mode Mode

	// Dir holds the certificate: the mounted files in ModeMounted
	// (default DefaultMountedDir), the generated CA and certificate in
	// ModeLocal (default DefaultLocalDir).
	Dir string

	// Port is the webhook server's port, which ModeLocal puts into the
	// webhook configurations' URLs.
	Port int

	// ManifestsPath is the webhook configurations that ModeLocal creates:
	// config/webhook/manifests.yaml, as controller-gen writes it. Defaults
	// to that path, relative to the working directory (`make run` runs in
	// the repository).
	ManifestsPath string

	// RESTConfig reaches the API server that ModeLocal writes the webhook
	// configurations to.
	RESTConfig *rest.Config
}

// DefaultManifestsPath is WebhookOptions.ManifestsPath's default.
const DefaultManifestsPath = "config/webhook/manifests.yaml"

// DefaultLocalDir is where ModeLocal keeps its CA and certificate unless
// told otherwise: the user's cache directory, so that they survive reboots
// and the API server keeps trusting the same CA from one run to the next.
func DefaultLocalDir() (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no default directory for local webhook certificates (%w): set one", err)
	}
	return filepath.Join(cache, "memcached-operator", "webhook-certs"), nil
}

// NewWebhookSource returns the webhook server's Source for o.Mode. Every
// problem that can be seen before the manager starts (a missing or invalid
// mounted certificate, an unwritable directory, unreadable manifests) is an
// error here, so the operator fails at start with a clear message.
func NewWebhookSource(o WebhookOptions) (Source, error) {
	switch o.Mode {
	case "", ModeMounted:
		dir := o.Dir
		if dir == "" {
			dir = DefaultMountedDir
		}
		return NewMounted(dir)
	case ModeLocal:
		dir := o.Dir
		if dir == "" {
			var err error
			if dir, err = DefaultLocalDir(); err != nil {
				return nil, err
			}
		}
		path := o.ManifestsPath
		if path == "" {
			path = DefaultManifestsPath
		}
		manifests, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("local webhook certificates: reading the webhook configurations: %w", err)
		}
		if o.RESTConfig == nil {
			return nil, errors.New("local webhook certificates: no REST config to write the webhook configurations with")
		}
		return NewLocal(LocalOptions{
			Dir:              dir,
			Port:             o.Port,
			WebhookManifests: manifests,
			RESTConfig:       o.RESTConfig,
		})
	default:
		_, err := ParseMode(string(o.Mode))
		return nil, err
	}
}
