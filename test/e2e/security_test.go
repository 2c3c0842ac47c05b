package e2e

import (
	"crypto/rand"
	"encoding/hex"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/example-inc/memcached-operator/test/framework/operatorproc"
)

// readyTimeout bounds the security specs' waits, as eventually does,
// sized for a busy two-core machine: it is not a figure.
const readyTimeout = 2 * time.Minute

var (
	// configDefaultObjects is `kustomize build config/default`.
	configDefaultObjects []*unstructured.Unstructured
	// operatorKubeconfig authenticates as the operator's ServiceAccount.
	operatorKubeconfig string
	// op is the operator every security spec runs against.
	op *operator
	// proxy is the proxy op has in its environment, password included.
	proxy proxySettings
)

// The security specs share one operator, run as config/default's
// ServiceAccount with exactly the roles config/default binds to it (plus
// what local webhook mode needs), a proxy with credentials in its
// environment and verbose logs; every log line of it is checked at the end.
var _ = Describe("security", Ordered, Label(labelHost, labelSecurity), func() {
	BeforeAll(func(ctx SpecContext) {
		var err error
		configDefaultObjects, err = kustomizeBuild(configDefaultDir)
		Expect(err).NotTo(HaveOccurred())

		// The next specs share the cluster: what is created here goes, the
		// namespace before they may make it again.
		DeferCleanup(func(ctx SpecContext) {
			objs := append(operatorRBACObjects(configDefaultObjects),
				&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: localWebhookRole}},
				&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: localWebhookRole}})
			for _, o := range objs {
				Expect(client.IgnoreNotFound(k8s.Delete(ctx, o))).To(Succeed())
			}
			eventually(ctx, func() error {
				return k8s.Get(ctx, client.ObjectKey{Name: operatorNamespace}, &corev1.Namespace{})
			}).Should(Satisfy(apierrors.IsNotFound))
		}, NodeTimeout(3*time.Minute))
		Expect(installOperatorRBAC(ctx, configDefaultObjects)).To(Succeed())
		Expect(grantLocalWebhookMode(ctx)).To(Succeed())
		operatorKubeconfig = filepath.Join(workDir, "security-operator.kubeconfig")
		Expect(cluster.local.WriteServiceAccountKubeconfig(ctx, operatorKubeconfig, operatorNamespace, operatorServiceAccount)).To(Succeed())

		proxy = newProxySettings(randomPassword())
		// Registered before the operator starts, so it runs after the
		// operator has stopped: the whole log, shutdown included, is
		// checked.
		DeferCleanup(func() {
			Expect(checkOperatorLogs()).To(Succeed())
		})
		op, err = startSecurityOperator(ctx, operatorOptions{name: "security-operator", webhooks: operatorproc.WebhooksLocal})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(op.stop)
	}, NodeTimeout(5*time.Minute))

	theMetricsEndpointSpecs()
	theGeneratedRbacSpecs()
	podSecurityRestrictedSpecs()
	proxyCredentialsSpecs()
	tlsSpecs()
})

// randomPassword is the proxy password: unique per run, so a match in a log
// can only come from this run's environment.
func randomPassword() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return "pw" + hex.EncodeToString(b)
}
