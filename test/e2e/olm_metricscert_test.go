package e2e

import (
	"context"
	"crypto/x509"
	"crypto/x509/pkix"
	"net"
	"strconv"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/example-inc/memcached-operator/certs"
	"github.com/example-inc/memcached-operator/hack/local-cluster/localcluster"
)

// The Secret the bundle's metrics Service asks OpenShift's service CA for
// (annotation service.beta.openshift.io/serving-cert-secret-name), which
// the manager mounts as an optional volume, and the metrics port.
// (metricsCertSecret, beside config/default's names).
const metricsPort = 8443

// expectMetricsCertificateFromServiceCA plays OpenShift's service CA, which
// does not run here: it issues a certificate for the metrics Service's DNS
// names into the Secret the Service names, as service-ca-operator does, and
// checks that the running manager pod, started without that Secret, first
// serves a certificate a scraper cannot verify and then, once kubelet has
// filled the optional volume, one that verifies for the Service's name
// against that CA, without a restart.
func expectMetricsCertificateFromServiceCA(ctx context.Context, in install, pod *corev1.Pod) {
	GinkgoHelper()
	now := time.Now()
	ca, err := certs.NewCA("openshift-service-serving-signer (test)", now.Add(-time.Minute), now.Add(time.Hour))
	Expect(err).NotTo(HaveOccurred())
	addr := net.JoinHostPort(pod.Status.PodIP, strconv.Itoa(metricsPort))
	serverName := metricsService + "." + in.namespace + ".svc"

	By(in.String() + ": without the service CA's Secret the manager runs, serving a certificate no scraper can verify")
	_, err = servedCertificate(ctx, addr, serverName, ca.CertPEM)
	Expect(err).To(MatchError(ContainSubstring("tls: failed to verify certificate")))

	By(in.String() + ": once the Secret exists the manager serves it, verified for <service>.<namespace>.svc")
	certPEM, keyPEM, err := ca.Issue(x509.Certificate{
		Subject:     pkix.Name{CommonName: serverName},
		DNSNames:    []string{serverName, serverName + ".cluster.local"},
		NotBefore:   now.Add(-time.Minute),
		NotAfter:    now.Add(time.Hour),
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	})
	Expect(err).NotTo(HaveOccurred())
	Expect(k8s.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: in.namespace, Name: metricsCertSecret},
		Type:       corev1.SecretTypeTLS,
		Data:       map[string][]byte{corev1.TLSCertKey: certPEM, corev1.TLSPrivateKeyKey: keyPEM},
	})).To(Succeed())
	start := time.Now()
	// Kubelet fills an optional Secret volume at its next sync of the pod,
	// about a minute later; the manager looks every few seconds.
	Eventually(func() error {
		_, err := servedCertificate(ctx, addr, serverName, ca.CertPEM)
		return err
	}).WithContext(ctx).WithTimeout(3 * time.Minute).WithPolling(time.Second).Should(Succeed())
	GinkgoWriter.Printf("%s: the service CA's certificate served %s after the Secret was created\n", in, time.Since(start).Round(time.Second))

	current := &corev1.Pod{}
	Expect(k8s.Get(ctx, client.ObjectKeyFromObject(pod), current)).To(Succeed())
	Expect(current.UID).To(Equal(pod.UID), "the same manager pod")
	Expect(localcluster.ContainerStatus(current, managerContainerName).RestartCount).To(BeZero(), "manager restarts")
}
