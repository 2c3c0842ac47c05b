package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
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

// operatorOptions say how startSecurityOperator runs one operator.
type operatorOptions struct {
	// name names the log file (<workDir>/<name>.log).
	name string
	// webhooks is local (the operator makes its certificate and writes
	// the webhook configurations) or mounted (it serves webhookCertDir's
	// certificate and writes nothing).
	webhooks operatorproc.Webhooks
	// webhookCertDir defaults to <workDir>/<name>-webhook-certs.
	webhookCertDir string
	// args are added to the flags every operator of the suite gets.
	args []string
}

// operatorLogs are the log files of every operator started, for
// checkOperatorLogs.
var operatorLogs struct {
	sync.Mutex
	paths []string
}

// startSecurityOperator starts the operator built for the suite as the operator's
// ServiceAccount, with secure metrics, leader election in the operator's
// namespace (as in a pod), the proxy settings in its environment and
// verbose logs (more log lines, more chances to leak), and waits until it
// is ready.
//
// GODEBUG=tls10server=1 makes Go's TLS servers accept TLS 1.0 and 1.1 again
// unless a server sets MinVersion itself: with it, the TLS specs prove the
// operator's own minimum, not Go's default.
func startSecurityOperator(ctx context.Context, o operatorOptions) (*operator, error) {
	if o.webhookCertDir == "" {
		o.webhookCertDir = filepath.Join(workDir, o.name+"-webhook-certs")
	}
	logPath := filepath.Join(workDir, o.name+".log")
	operatorLogs.Lock()
	operatorLogs.paths = append(operatorLogs.paths, logPath)
	operatorLogs.Unlock()
	op, err := operatorproc.Start(ctx, operatorproc.Options{
		Binary:                  operatorBinary,
		Kubeconfig:              operatorKubeconfig,
		LogPath:                 logPath,
		Webhooks:                o.webhooks,
		WebhookCertDir:          o.webhookCertDir,
		SecureMetrics:           true,
		LeaderElectionNamespace: operatorNamespace,
		Env:                     append(append(relatedImageEnv(), proxy.environ()...), "GODEBUG=tls10server=1"),
		ExtraArgs:               append([]string{"--zap-log-level=5"}, o.args...),
		ReadyTimeout:            readyTimeout,
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", o.name, err)
	}
	return &operator{Operator: op}, nil
}

// stop sends SIGTERM and allows 30 seconds (a local-mode operator deletes
// its webhook configurations on the way out).
func (op *operator) stop() error {
	return op.Stop(30 * time.Second)
}

// operatorRBACKinds are the objects of config/default that make up the
// operator's identity and rights.
var operatorRBACKinds = []string{"Namespace", "ServiceAccount", "Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding"}

// installOperatorRBAC creates config/default's namespace, ServiceAccount,
// roles and bindings as rendered, so the operator runs with what `make
// deploy` would give it and nothing more.
func installOperatorRBAC(ctx context.Context, objs []*unstructured.Unstructured) error {
	rbac := operatorRBACObjects(objs)
	if len(rbac) == 0 {
		return fmt.Errorf("config/default renders none of %v", operatorRBACKinds)
	}
	for _, u := range rbac {
		if err := k8s.Create(ctx, u); err != nil {
			return fmt.Errorf("creating %s %s: %w", u.GetObjectKind().GroupVersionKind().Kind, u.GetName(), err)
		}
	}
	return nil
}

// operatorRBACObjects are copies of the objects of objs of the kinds of
// operatorRBACKinds.
func operatorRBACObjects(objs []*unstructured.Unstructured) []client.Object {
	var out []client.Object
	for _, u := range objs {
		if slices.Contains(operatorRBACKinds, u.GetKind()) {
			out = append(out, u.DeepCopy())
		}
	}
	return out
}

// localWebhookRole is the test's one addition to the generated RBAC:
// --webhook-cert-mode=local (make run's mode, never used in a cluster)
// writes and deletes the webhook configurations itself, which in a
// cluster cert-manager or OLM do.
const localWebhookRole = "security-test-local-webhook-mode"

func grantLocalWebhookMode(ctx context.Context) error {
	cr := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: localWebhookRole},
		Rules: []rbacv1.PolicyRule{{
			APIGroups: []string{"admissionregistration.k8s.io"},
			Resources: []string{"mutatingwebhookconfigurations", "validatingwebhookconfigurations"},
			Verbs:     []string{"get", "create", "patch", "delete"},
		}},
	}
	if err := k8s.Create(ctx, cr); err != nil {
		return err
	}
	return bindClusterRole(ctx, localWebhookRole, localWebhookRole, operatorNamespace, operatorServiceAccount)
}

// bindClusterRole binds ClusterRole role to a ServiceAccount.
func bindClusterRole(ctx context.Context, name, role, ns, sa string) error {
	return k8s.Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: sa}},
	})
}

// createServiceAccount creates a ServiceAccount, and its namespace if
// missing.
func createServiceAccount(ctx context.Context, ns, name string) error {
	err := k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return k8s.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}})
}

// rbacDenial matches the API server's message for a request RBAC refused.
var rbacDenial = regexp.MustCompile(`cannot (get|list|watch|create|update|patch|delete) resource`)

// logProblems returns what is wrong with one operator log: the proxy
// credentials in it, an RBAC refusal, or no sign that the operator read
// the proxy at all (the redacted line), which would make the first check
// vacuous.
func logProblems(p proxySettings, data []byte) []string {
	var out []string
	if leak := p.leakIn(data); leak != "" {
		out = append(out, fmt.Sprintf("holds the proxy credentials: ...%s...", leak))
	}
	if m := rbacDenial.Find(data); m != nil {
		out = append(out, fmt.Sprintf("shows the generated RBAC refused the operator: %q", m))
	}
	if !bytes.Contains(data, []byte("propagating proxy variable")) || !bytes.Contains(data, []byte("REDACTED")) {
		out = append(out, "does not log the redacted proxy variables: did the operator read them?")
	}
	return out
}

// checkOperatorLogs runs logProblems over the log of every operator the
// suite started.
func checkOperatorLogs() error {
	operatorLogs.Lock()
	defer operatorLogs.Unlock()
	if len(operatorLogs.paths) == 0 {
		return errors.New("no operator log to check")
	}
	var errs []error
	for _, path := range operatorLogs.paths {
		data, err := os.ReadFile(path)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, problem := range logProblems(proxy, data) {
			errs = append(errs, fmt.Errorf("%s %s", path, problem))
		}
	}
	return errors.Join(errs...)
}

// TestLogProblems proves the log check finds what it looks for, in the
// forms it would take in the operator's JSON log.
func TestLogProblems(t *testing.T) {
	p := newProxySettings("pw0123456789abcdef")
	const redacted = `{"msg":"propagating proxy variable to memcached containers","name":"HTTP_PROXY","value":"http://REDACTED@proxy.invalid:3128"}` + "\n"
	tests := []struct {
		name string
		log  string
		want []string
	}{
		{"redacted only", redacted, nil},
		{"the password", redacted + `{"msg":"applying","env":"http://proxyuser:pw0123456789abcdef@proxy.invalid:3128"}`,
			[]string{"holds the proxy credentials"}},
		{"a Proxy-Authorization header", redacted + `{"header":"Basic cHJveHl1c2VyOnB3MDEyMzQ1Njc4OWFiY2RlZg=="}`,
			[]string{"holds the proxy credentials"}},
		{"an RBAC refusal", redacted + `{"error":"memcacheds.cache.example.com is forbidden: User \"system:serviceaccount:ns:sa\" cannot list resource \"memcacheds\" in API group \"cache.example.com\" at the cluster scope"}`,
			[]string{"RBAC refused"}},
		{"a quota refusal is no RBAC refusal", redacted + `{"error":"deployments.apps \"x\" is forbidden: exceeded quota: no-deployments"}`, nil},
		{"no sign the proxy was read", `{"msg":"starting manager"}`, []string{"does not log the redacted proxy"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := logProblems(p, []byte(tt.log))
			if len(got) != len(tt.want) {
				t.Fatalf("logProblems = %q, want %d problems like %q", got, len(tt.want), tt.want)
			}
			for i := range tt.want {
				if !strings.Contains(got[i], tt.want[i]) {
					t.Errorf("problem %d = %q, want it to say %q", i, got[i], tt.want[i])
				}
			}
		})
	}
}
