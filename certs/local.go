package certs

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

// LocalNamePrefix starts the names of the webhook configurations that
// LocalSource writes, so they never collide with an installed operator's
// (config/default prefixes its own with "memcached-operator-") nor with
// another project's unprefixed ones.
const LocalNamePrefix = "memcached-operator-local-"

// LocalFieldOwner is the field manager of LocalSource's server-side applies.
const LocalFieldOwner = "memcached-operator-local"

// LocalOptions configures a LocalSource.
type LocalOptions struct {
	// Dir keeps the CA (ca.crt) and the serving certificate (tls.crt,
	// tls.key) from one run to the next. Created (0700) if missing;
	// refused if it is another user's or group or others can write it.
	Dir string

	// Port is the webhook server's port on 127.0.0.1.
	Port int

	// WebhookManifests holds the webhook configurations to point at this
	// host: config/webhook/manifests.yaml, as controller-gen writes it,
	// with every webhook's clientConfig naming a service and a path.
	WebhookManifests []byte

	// RESTConfig reaches the API server to write the configurations to.
	RESTConfig *rest.Config
}

// LocalSource lets an API server on this host call the operator running on
// this host, as under `make run`. See the package documentation.
type LocalSource struct {
	cert    tls.Certificate
	caPEM   []byte
	url     string
	configs []*unstructured.Unstructured
	client  client.Client
	// written is set once Start has written the configurations.
	written atomic.Bool
}

var _ Source = &LocalSource{}

// NewLocal loads or makes the CA and serving certificate in o.Dir and
// prepares the webhook configurations; Start writes them.
func NewLocal(o LocalOptions) (*LocalSource, error) {
	var errs []error
	if o.Dir == "" {
		errs = append(errs, errors.New("no directory to keep the CA and certificate in"))
	}
	if o.Port <= 0 || o.Port > 65535 {
		errs = append(errs, fmt.Errorf("webhook port %d is not a TCP port", o.Port))
	}
	if o.RESTConfig == nil {
		errs = append(errs, errors.New("no REST config"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("local webhook certificates: %w", err)
	}

	pki, reason, err := loadOrCreateLocalPKI(o.Dir, time.Now())
	if err != nil {
		return nil, err
	}
	log := ctrllog.Log.WithName("certs")
	if reason != "" {
		log.Info("made a new local CA and webhook serving certificate", "dir", o.Dir, "reason", reason)
	} else {
		log.Info("reusing the local CA and webhook serving certificate", "dir", o.Dir)
	}
	cert, err := tls.X509KeyPair(pki.certPEM, pki.keyPEM)
	if err != nil {
		return nil, err
	}
	url := LocalWebhookURL(o.Port)
	configs, err := localWebhookConfigurations(o.WebhookManifests, url, pki.caPEM)
	if err != nil {
		return nil, err
	}
	c, err := client.New(o.RESTConfig, client.Options{})
	if err != nil {
		return nil, fmt.Errorf("local webhook certificates: %w", err)
	}
	return &LocalSource{cert: cert, caPEM: pki.caPEM, url: url, configs: configs, client: c}, nil
}

// LocalWebhookURL is where the API server calls the webhooks in local mode:
// the webhook paths are appended to it.
func LocalWebhookURL(port int) string {
	return "https://" + net.JoinHostPort(localIP, strconv.Itoa(port))
}

// CABundle is the local CA, as the webhook configurations carry it.
func (s *LocalSource) CABundle() []byte { return bytes.Clone(s.caPEM) }

// ConfigurationNames are the names of the webhook configurations Start
// writes.
func (s *LocalSource) ConfigurationNames() []string {
	names := make([]string, 0, len(s.configs))
	for _, u := range s.configs {
		names = append(names, u.GetKind()+"/"+u.GetName())
	}
	return names
}

// ConfigureTLS implements Source.
func (s *LocalSource) ConfigureTLS(c *tls.Config) {
	c.GetCertificate = func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return &s.cert, nil }
}

// Start implements Source: it creates or updates the webhook configurations
// (server-side apply, forcing ownership of the fields it sets), and deletes
// them when ctx is done. The manager starts it after the webhook server, so
// the configurations point at a server that is listening.
func (s *LocalSource) Start(ctx context.Context) error {
	log := ctrllog.Log.WithName("certs")
	for _, u := range s.configs {
		if err := s.client.Apply(ctx, client.ApplyConfigurationFromUnstructured(u.DeepCopy()),
			client.FieldOwner(LocalFieldOwner), client.ForceOwnership); err != nil {
			return fmt.Errorf("local webhook certificates: writing %s %s: %w", u.GetKind(), u.GetName(), err)
		}
	}
	s.written.Store(true)
	log.Info("webhook configurations point at this host", "configurations", s.ConfigurationNames(), "url", s.url)

	<-ctx.Done()

	// The webhooks fail closed: left behind, they would refuse every
	// Memcached write until the next run. ctx is done, so use a fresh one.
	cleanup, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var errs []error
	for _, u := range s.configs {
		if err := s.client.Delete(cleanup, u.DeepCopy()); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("local webhook certificates: deleting the webhook configurations: %w", err)
	}
	log.Info("deleted the local webhook configurations", "configurations", s.ConfigurationNames())
	return nil
}

// NeedLeaderElection implements Source.
func (s *LocalSource) NeedLeaderElection() bool { return false }

// Ready implements Source: the API server calls this host only once Start
// has written the webhook configurations, so until then the operator is
// not ready; a write in between would skip the webhooks.
func (s *LocalSource) Ready(*http.Request) error {
	if !s.written.Load() {
		return errors.New("the webhook configurations do not point at this host yet")
	}
	return nil
}

// localWebhookConfigurations turns the generated webhook configurations into
// the local ones: names prefixed with LocalNamePrefix, and every webhook's
// clientConfig a URL on this host (baseURL + the service path) with caPEM
// as its CA bundle. Everything else (rules, failure policy, timeouts) stays
// as generated.
func localWebhookConfigurations(manifests []byte, baseURL string, caPEM []byte) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(manifests), 4096)
	for {
		var u unstructured.Unstructured
		if err := dec.Decode(&u.Object); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, fmt.Errorf("webhook manifests: %w", err)
		}
		if len(u.Object) == 0 {
			continue
		}
		var obj client.Object
		switch gvk := u.GroupVersionKind(); gvk {
		case admissionregistrationv1.SchemeGroupVersion.WithKind("MutatingWebhookConfiguration"):
			var m admissionregistrationv1.MutatingWebhookConfiguration
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &m); err != nil {
				return nil, fmt.Errorf("webhook manifests: %w", err)
			}
			for i := range m.Webhooks {
				if err := pointAtHost(&m.Webhooks[i].ClientConfig, m.Webhooks[i].Name, baseURL, caPEM); err != nil {
					return nil, err
				}
			}
			obj = &m
		case admissionregistrationv1.SchemeGroupVersion.WithKind("ValidatingWebhookConfiguration"):
			var v admissionregistrationv1.ValidatingWebhookConfiguration
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &v); err != nil {
				return nil, fmt.Errorf("webhook manifests: %w", err)
			}
			for i := range v.Webhooks {
				if err := pointAtHost(&v.Webhooks[i].ClientConfig, v.Webhooks[i].Name, baseURL, caPEM); err != nil {
					return nil, err
				}
			}
			obj = &v
		default:
			return nil, fmt.Errorf("webhook manifests: unexpected %s %q", gvk, u.GetName())
		}
		obj.SetName(LocalNamePrefix + obj.GetName())
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			return nil, err
		}
		local := &unstructured.Unstructured{Object: m}
		unstructured.RemoveNestedField(local.Object, "metadata", "creationTimestamp")
		out = append(out, local)
	}
	if len(out) == 0 {
		return nil, errors.New("webhook manifests: no webhook configurations")
	}
	return out, nil
}

func pointAtHost(cc *admissionregistrationv1.WebhookClientConfig, webhook, baseURL string, caPEM []byte) error {
	if cc.Service == nil || cc.Service.Path == nil {
		return fmt.Errorf("webhook manifests: webhook %s has no service path to call", webhook)
	}
	url := baseURL + *cc.Service.Path
	cc.Service = nil
	cc.URL = &url
	cc.CABundle = bytes.Clone(caPEM)
	return nil
}
