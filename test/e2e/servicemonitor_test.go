package e2e

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"time"

	. "github.com/onsi/gomega"
	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/example-inc/memcached-operator/test/framework/scrape"
)

// monitorScrape is a scrape of the operator's metrics as a Prometheus
// Operator's Prometheus makes it from a ServiceMonitor endpoint, with
// everything taken from what the ServiceMonitor names: the token from its
// authorization Secret, the CA from its tlsConfig's Secret, the server name
// from tlsConfig.serverName, scheme and path from the endpoint, the port by
// name from the Service its selector picks. Only the address is the test's:
// the manager runs on the host, so the scrape goes to its port there rather
// than to the Service's pod endpoint (config/default's manager pod cannot
// start here: its image is not on the node).
type monitorScrape struct {
	url         string
	serverName  string
	roots       *x509.CertPool
	token       string
	servicePort corev1.ServicePort
}

// scrapeFromMonitor reads sm (endpoint 0) and what it names from the
// cluster; metricsPort is where the manager serves on the host. It fails
// on whatever a user-workload Prometheus could not use: a file path, a
// skipped verification, a Secret that does not hold the key.
func scrapeFromMonitor(ctx context.Context, g Gomega, sm *monitoringv1.ServiceMonitor, metricsPort int) *monitorScrape {
	g.Expect(sm.Spec.Endpoints).To(HaveLen(1))
	ep := sm.Spec.Endpoints[0]
	g.Expect(ep.BearerTokenFile).To(BeEmpty(), "bearerTokenFile") //nolint:staticcheck // deprecated, and what must be absent
	g.Expect(ep.Scheme).To(HaveValue(BeEquivalentTo("https")))
	g.Expect(ep.Authorization).NotTo(BeNil(), "authorization")
	g.Expect(ep.Authorization.Type).To(Equal("Bearer"))
	g.Expect(ep.Authorization.Credentials).NotTo(BeNil(), "authorization.credentials")
	g.Expect(ep.TLSConfig).NotTo(BeNil(), "tlsConfig")
	g.Expect(ep.TLSConfig.CAFile).To(BeEmpty(), "tlsConfig.caFile")
	g.Expect(ep.TLSConfig.CertFile).To(BeEmpty(), "tlsConfig.certFile")
	g.Expect(ep.TLSConfig.KeyFile).To(BeEmpty(), "tlsConfig.keyFile")
	g.Expect(ep.TLSConfig.InsecureSkipVerify).To(Or(BeNil(), HaveValue(BeFalse())), "tlsConfig.insecureSkipVerify")
	g.Expect(ep.TLSConfig.CA.Secret).NotTo(BeNil(), "tlsConfig.ca.secret")
	g.Expect(ep.TLSConfig.ServerName).NotTo(BeNil(), "tlsConfig.serverName")

	// The Service the selector picks in the ServiceMonitor's namespace,
	// and its port of the endpoint's name.
	g.Expect(sm.Spec.NamespaceSelector.Any).To(BeFalse())
	g.Expect(sm.Spec.NamespaceSelector.MatchNames).To(BeEmpty())
	selector, err := metav1.LabelSelectorAsSelector(&sm.Spec.Selector)
	g.Expect(err).NotTo(HaveOccurred())
	var services corev1.ServiceList
	g.Expect(k8s.List(ctx, &services, client.InNamespace(sm.Namespace), client.MatchingLabelsSelector{Selector: selector})).To(Succeed())
	g.Expect(services.Items).To(HaveLen(1), "Services the ServiceMonitor selects")
	var port *corev1.ServicePort
	for i, p := range services.Items[0].Spec.Ports {
		if p.Name == ep.Port {
			port = &services.Items[0].Spec.Ports[i]
		}
	}
	g.Expect(port).NotTo(BeNil(), "Service %s has no port %q", services.Items[0].Name, ep.Port)

	s := &monitorScrape{
		url:         "https://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(metricsPort)) + ep.Path,
		serverName:  *ep.TLSConfig.ServerName,
		roots:       x509.NewCertPool(),
		servicePort: *port,
	}
	tokenSecret := getSecretG(ctx, g, sm.Namespace, ep.Authorization.Credentials.Name)
	// The token controller fills the Secret in after it is created.
	g.Expect(tokenSecret.Data).To(HaveKeyWithValue(ep.Authorization.Credentials.Key, Not(BeEmpty())), "the token")
	s.token = string(tokenSecret.Data[ep.Authorization.Credentials.Key])
	caSecret := getSecretG(ctx, g, sm.Namespace, ep.TLSConfig.CA.Secret.Name)
	g.Expect(s.roots.AppendCertsFromPEM(caSecret.Data[ep.TLSConfig.CA.Secret.Key])).To(BeTrue(), "a PEM CA in Secret %s, key %s",
		ep.TLSConfig.CA.Secret.Name, ep.TLSConfig.CA.Secret.Key)
	return s
}

// get scrapes once, verifying the server as the ServiceMonitor says, and
// returns the status and the body.
func (s *monitorScrape) get(ctx context.Context) (int, string, error) {
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: s.roots, ServerName: s.serverName, MinVersion: tls.VersionTLS12},
		Proxy:           nil,
	}}
	return scrape.Get(ctx, c, s.url, s.token)
}

// verificationError says whether err is a failed certificate verification,
// as opposed to a connection that could not be made.
func verificationError(err error) error {
	var hostname x509.HostnameError
	var authority x509.UnknownAuthorityError
	var verify *tls.CertificateVerificationError
	if errors.As(err, &hostname) || errors.As(err, &authority) || errors.As(err, &verify) {
		return nil
	}
	return fmt.Errorf("not a certificate verification error: %w", err)
}
