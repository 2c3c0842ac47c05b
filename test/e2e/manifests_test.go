package e2e

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	cmapi "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/example-inc/memcached-operator/api/v1/gen"
	"github.com/example-inc/memcached-operator/certs"
	"github.com/example-inc/memcached-operator/hack/repo"
	"github.com/example-inc/memcached-operator/test/framework/harness"
	"github.com/example-inc/memcached-operator/test/framework/manifest"
	"github.com/example-inc/memcached-operator/test/framework/webhookroute"
)

// buildConfigDefault runs `kustomize build config/default`.
func buildConfigDefault() ([]byte, error) {
	return harness.KustomizeBuild(filepath.Join(repo.Root(), "config", "default"))
}

// uninstall deletes what manifests (config/default) applied, but the CRD,
// waiting until it is gone: the next specs on the cluster keep their
// Memcached objects and find no webhook of this installation.
func uninstall(ctx context.Context, manifests []byte) {
	GinkgoHelper()
	objs, err := manifest.Decode(manifests)
	Expect(err).NotTo(HaveOccurred())
	var docs [][]byte
	for _, u := range objs {
		if u.GetKind() == "CustomResourceDefinition" {
			continue
		}
		b, err := u.MarshalJSON()
		Expect(err).NotTo(HaveOccurred())
		docs = append(docs, b)
	}
	Expect(kubectl(ctx, bytes.Join(docs, []byte("\n")), "delete", "--ignore-not-found", "--wait", "--timeout=3m", "-f", "-")).
		Error().NotTo(HaveOccurred())
}

// installation is the decoded output of config/default, with the objects
// the certificate wiring connects.
type installation struct {
	certificates map[string]*cmapi.Certificate
	issuers      map[string]*cmapi.Issuer
	services     map[string]*corev1.Service
	manager      *appsv1.Deployment
	mutating     []*admissionregistrationv1.MutatingWebhookConfiguration
	validating   []*admissionregistrationv1.ValidatingWebhookConfiguration
}

func manifestScheme() *runtime.Scheme {
	return gen.Scheme(cmapi.AddToScheme)
}

// decodeInstallation decodes every document of a multi-document YAML stream
// into the API types; kinds it does not know (the CRD) are skipped.
func decodeInstallation(manifests []byte) (*installation, error) {
	in := &installation{
		certificates: map[string]*cmapi.Certificate{},
		issuers:      map[string]*cmapi.Issuer{},
		services:     map[string]*corev1.Service{},
	}
	decoder := serializer.NewCodecFactory(manifestScheme()).UniversalDeserializer()
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(manifests)))
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		obj, gvk, err := decoder.Decode(doc, nil, nil)
		if runtime.IsNotRegisteredError(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("decoding %s: %w", gvk, err)
		}
		switch o := obj.(type) {
		case *cmapi.Certificate:
			in.certificates[o.Namespace+"/"+o.Name] = o
		case *cmapi.Issuer:
			in.issuers[o.Namespace+"/"+o.Name] = o
		case *corev1.Service:
			in.services[o.Namespace+"/"+o.Name] = o
		case *appsv1.Deployment:
			if in.manager != nil {
				return nil, fmt.Errorf("two Deployments: %s and %s", in.manager.Name, o.Name)
			}
			in.manager = o
		case *admissionregistrationv1.MutatingWebhookConfiguration:
			in.mutating = append(in.mutating, o)
		case *admissionregistrationv1.ValidatingWebhookConfiguration:
			in.validating = append(in.validating, o)
		}
	}
	if in.manager == nil {
		return nil, errors.New("no manager Deployment")
	}
	return in, nil
}

// webhookService is the Service every webhook of the configurations calls.
// webhookNames are the names of the webhook configurations.
func (in *installation) webhookNames() webhookroute.Names {
	var n webhookroute.Names
	for _, m := range in.mutating {
		n.Mutating = append(n.Mutating, m.Name)
	}
	for _, v := range in.validating {
		n.Validating = append(n.Validating, v.Name)
	}
	return n
}

func (in *installation) webhookService() (*corev1.Service, error) {
	var refs []admissionregistrationv1.WebhookClientConfig
	for _, m := range in.mutating {
		for _, w := range m.Webhooks {
			refs = append(refs, w.ClientConfig)
		}
	}
	for _, v := range in.validating {
		for _, w := range v.Webhooks {
			refs = append(refs, w.ClientConfig)
		}
	}
	var key string
	for _, cc := range refs {
		if cc.Service == nil {
			return nil, errors.New("a webhook calls a URL, not a Service")
		}
		k := cc.Service.Namespace + "/" + cc.Service.Name
		if key != "" && k != key {
			return nil, fmt.Errorf("webhooks call two Services: %s and %s", key, k)
		}
		key = k
	}
	svc := in.services[key]
	if svc == nil {
		return nil, fmt.Errorf("the webhooks call Service %q, which config/default does not create", key)
	}
	return svc, nil
}

// injectedCertificate is the Certificate whose CA cert-manager injects into
// every webhook configuration (annotation cert-manager.io/inject-ca-from).
func (in *installation) injectedCertificate() (*cmapi.Certificate, error) {
	var key string
	var annotations []map[string]string
	for _, m := range in.mutating {
		annotations = append(annotations, m.Annotations)
	}
	for _, v := range in.validating {
		annotations = append(annotations, v.Annotations)
	}
	if len(annotations) == 0 {
		return nil, errors.New("no webhook configurations")
	}
	for _, a := range annotations {
		k := a["cert-manager.io/inject-ca-from"]
		if k == "" || (key != "" && k != key) {
			return nil, fmt.Errorf("webhook configurations inject CAs from %q and %q", key, k)
		}
		key = k
	}
	crt := in.certificates[key]
	if crt == nil {
		return nil, fmt.Errorf("inject-ca-from names Certificate %q, which config/default does not create", key)
	}
	return crt, nil
}

// mountedSecret is the Secret the manager mounts at dir, and the manager's
// flag value for it, if any.
func (in *installation) mountedSecret(dir string) (string, error) {
	pod := in.manager.Spec.Template.Spec
	var volume string
	for _, c := range pod.Containers {
		for _, m := range c.VolumeMounts {
			if m.MountPath == dir {
				volume = m.Name
			}
		}
	}
	for _, v := range pod.Volumes {
		if v.Name == volume && v.Secret != nil {
			return v.Secret.SecretName, nil
		}
	}
	return "", fmt.Errorf("the manager mounts no Secret at %s", dir)
}

// managerArg is the value of the manager's --name flag, "" when not given.
func (in *installation) managerArg(name string) string {
	for _, c := range in.manager.Spec.Template.Spec.Containers {
		for _, a := range c.Args {
			if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
				return v
			}
		}
	}
	return ""
}

// serviceDNSNames are the names a Service's serving certificate must carry.
func serviceDNSNames(svc *corev1.Service) []string {
	base := svc.Name + "." + svc.Namespace + ".svc"
	return []string{base, base + ".cluster.local"}
}

// TestConfigDefaultCertificates checks config/default's certificate wiring
// in the types cert-manager itself decodes: each Certificate carries the DNS
// names of the Service it serves, comes from an Issuer that is installed
// with it, and lands in the Secret the manager mounts where it reads it.
func TestConfigDefaultCertificates(t *testing.T) {
	out, err := buildConfigDefault()
	if err != nil {
		t.Fatal(err)
	}
	in, err := decodeInstallation(out)
	if err != nil {
		t.Fatal(err)
	}

	webhookService, err := in.webhookService()
	if err != nil {
		t.Fatal(err)
	}
	webhookCert, err := in.injectedCertificate()
	if err != nil {
		t.Fatal(err)
	}
	metricsCertDir := in.managerArg("metrics-cert-path")
	metricsService := in.services[in.manager.Namespace+"/memcached-operator-controller-manager-metrics-service"]
	if metricsService == nil {
		t.Fatal("no metrics Service")
	}

	tests := []struct {
		name     string
		cert     *cmapi.Certificate
		service  *corev1.Service
		mountDir string
	}{
		// The manager reads the webhook certificate from the default
		// directory of mounted mode: config/default passes no flag for it.
		{name: "webhook", cert: webhookCert, service: webhookService, mountDir: certs.DefaultMountedDir},
		{name: "metrics", cert: in.certificates[in.manager.Namespace+"/memcached-operator-metrics-certs"], service: metricsService, mountDir: metricsCertDir},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.cert == nil {
				t.Fatal("no Certificate")
			}
			if tt.mountDir == "" {
				t.Fatal("the manager is not told where the certificate is")
			}
			if got, want := tt.cert.Spec.DNSNames, serviceDNSNames(tt.service); !slices.Equal(got, want) {
				t.Errorf("Certificate %s dnsNames %v, want %v (from Service %s/%s)",
					tt.cert.Name, got, want, tt.service.Namespace, tt.service.Name)
			}
			secret, err := in.mountedSecret(tt.mountDir)
			if err != nil {
				t.Fatal(err)
			}
			if tt.cert.Spec.SecretName != secret {
				t.Errorf("Certificate %s writes Secret %q, the manager mounts %q at %s",
					tt.cert.Name, tt.cert.Spec.SecretName, secret, tt.mountDir)
			}
			if tt.cert.Namespace != in.manager.Namespace {
				t.Errorf("Certificate in namespace %q, manager in %q", tt.cert.Namespace, in.manager.Namespace)
			}
			ref := tt.cert.Spec.IssuerRef
			if ref.Kind != "Issuer" || in.issuers[tt.cert.Namespace+"/"+ref.Name] == nil {
				t.Errorf("Certificate %s names %s %q, which config/default does not create", tt.cert.Name, ref.Kind, ref.Name)
			}
		})
	}

	// The webhook Service reaches the manager's webhook port.
	var port int32
	for _, c := range in.manager.Spec.Template.Spec.Containers {
		for _, p := range c.Ports {
			if p.Name == "webhook-server" {
				port = p.ContainerPort
			}
		}
	}
	if len(webhookService.Spec.Ports) != 1 || webhookService.Spec.Ports[0].TargetPort.IntValue() != int(port) {
		t.Errorf("webhook Service ports %v do not target the manager's webhook-server port %d", webhookService.Spec.Ports, port)
	}
}
