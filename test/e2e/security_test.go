package e2e

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
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
	"github.com/onsi/gomega/types"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
	"github.com/example-inc/memcached-operator/api/v1/gen"
	"github.com/example-inc/memcached-operator/controllers/monitoring"
	"github.com/example-inc/memcached-operator/test/framework/manifest"
	"github.com/example-inc/memcached-operator/test/framework/operatorproc"
	"github.com/example-inc/memcached-operator/test/framework/scrape"
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

// getMetrics GETs the operator's /metrics with token as bearer token ("" sends
// no Authorization header) and returns the status code and body.
func getMetrics(ctx context.Context, addr, token string) (int, string, error) {
	c := &http.Client{
		Timeout: 10 * time.Second,
		Transport: &http.Transport{
			// The metrics certificate is controller-runtime's self-signed
			// one, made at start: nothing to verify it against. What is
			// tested is who gets an answer, not the certificate.
			TLSClientConfig:   &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // see above
			DisableKeepAlives: true,
			Proxy:             nil,
		},
	}
	return scrape.Get(ctx, c, "https://"+addr+"/metrics", token)
}

// theMetricsEndpointSpecs are the "The metrics endpoint" specs of the security container (above).
func theMetricsEndpointSpecs() {
	Describe("The metrics endpoint", Ordered, func() {
		const (
			ns       = "metrics-scrapers"
			reader   = "prometheus"
			stranger = "stranger"
		)
		// tokens of the callers, by name.
		tokens := map[string]string{}

		BeforeAll(func(ctx SpecContext) {
			// reader gets config/rbac/metrics_reader_role.yaml's ClusterRole, as
			// installed from config/default; stranger gets nothing.
			for _, sa := range []string{reader, stranger} {
				Expect(createServiceAccount(ctx, ns, sa)).To(Succeed())
			}
			Expect(bindClusterRole(ctx, "metrics-scraper-prometheus", metricsReaderRole, ns, reader)).To(Succeed())
			for _, sa := range []string{reader, stranger} {
				t, err := cluster.local.ServiceAccountToken(ctx, ns, sa)
				Expect(err).NotTo(HaveOccurred())
				tokens[sa] = t
			}
			// Not a token the API server issued.
			tokens["forged"] = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzeXN0ZW06YWRtaW4ifQ.c2lnbmF0dXJl"
		})

		DescribeTable("answers",
			func(ctx SpecContext, caller string, want types.GomegaMatcher) {
				var got int
				// Eventually: the RBAC binding reaches the API server's
				// authorizer within moments, not at once.
				Eventually(func(g Gomega) {
					code, body, err := getMetrics(ctx, op.MetricsAddr(), tokens[caller])
					g.Expect(err).NotTo(HaveOccurred())
					got = code
					g.Expect(code).To(want, "body: %.300s", body)
					if code == http.StatusOK {
						g.Expect(body).To(ContainSubstring("controller_runtime_reconcile_total"))
					}
				}).WithContext(ctx).WithTimeout(readyTimeout).WithPolling(time.Second).Should(Succeed())
				AddReportEntry("GET /metrics with token of "+cmp.Or(caller, "nobody"), got)
			},
			Entry("401 without a token", "", Equal(http.StatusUnauthorized)),
			// The TokenReview of a token the API server cannot parse comes back
			// unauthenticated, with an error in its status: still a refused
			// token, not a failed review (controller-runtime's filter answered
			// 500).
			Entry("401 with a token the API server did not issue", "forged", Equal(http.StatusUnauthorized)),
			Entry("403 to a ServiceAccount without the metrics-reader role", stranger, Equal(http.StatusForbidden)),
			Entry("200 to a ServiceAccount with the metrics-reader role", reader, Equal(http.StatusOK)),
		)

		// Enough forged tokens at once that, if each cost a TokenReview, they
		// would wait behind the client's 50 QPS for longer than a review's 10 s
		// timeout (1,024 / 50 QPS = 20 s), as they did before the gate bounded
		// them.
		It("keeps answering the reader through a flood of forged tokens", func(ctx SpecContext) {
			const forged, atOnce = 2048, 1024
			code, _, err := getMetrics(ctx, op.MetricsAddr(), tokens[reader])
			Expect(err).NotTo(HaveOccurred())
			Expect(code).To(Equal(http.StatusOK))

			start := time.Now()
			codes := make(chan int, forged)
			next := make(chan int)
			var flood sync.WaitGroup
			for range atOnce {
				flood.Go(func() {
					for i := range next {
						code, _, err := getMetrics(ctx, op.MetricsAddr(), fmt.Sprintf("forged-%d", i))
						if err != nil {
							code = -1
						}
						codes <- code
					}
				})
			}
			go func() {
				defer close(next)
				for i := range forged {
					next <- i
				}
			}()
			floodDone := make(chan struct{})
			go func() { flood.Wait(); close(floodDone) }()

			// The reader scrapes for as long as the flood lasts.
			var readerScrapes int
			var slowest time.Duration
			for flooding := true; flooding; {
				select {
				case <-floodDone:
					flooding = false
				default:
				}
				t := time.Now()
				code, body, err := getMetrics(ctx, op.MetricsAddr(), tokens[reader])
				Expect(err).NotTo(HaveOccurred())
				Expect(code).To(Equal(http.StatusOK), "scrape %d, %s into the flood: %.300s", readerScrapes+1, time.Since(start), body)
				readerScrapes++
				slowest = max(slowest, time.Since(t))
			}
			close(codes)
			got := map[int]int{}
			for code := range codes {
				got[code]++
			}
			Expect(got).To(HaveLen(2), "forged tokens get 401 or, past the reviews under way, 429: %v", got)
			Expect(got[http.StatusUnauthorized] + got[http.StatusTooManyRequests]).To(Equal(forged))
			Expect(op.Running()).To(BeTrue())
			AddReportEntry("metrics under a flood of forged tokens", fmt.Sprintf(
				"%d forged (%d at once) in %s: %d x 401, %d x 429; the reader scraped %d times, all 200, slowest %s",
				forged, atOnce, time.Since(start).Round(time.Millisecond), got[http.StatusUnauthorized], got[http.StatusTooManyRequests],
				readerScrapes, slowest.Round(time.Millisecond)))
		}, SpecTimeout(3*time.Minute))
	})
}

// warningRecorder keeps the warnings the API server returns with a
// response (what kubectl prints as "Warning: ..."). For a Deployment whose
// pods break the namespace's Pod Security level, that is the only signal
// at create time: enforcement itself applies to the pods.
type warningRecorder struct {
	mu    sync.Mutex
	texts []string
}

func (w *warningRecorder) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.texts = append(w.texts, text)
}

func (w *warningRecorder) warnings() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.texts...)
}

// clientsetWithWarnings is an admin clientset whose warnings go to the
// returned recorder.
func clientsetWithWarnings() (kubernetes.Interface, *warningRecorder) {
	w := &warningRecorder{}
	cfg := cluster.RestConfig()
	cfg.WarningHandler = w
	return kubernetes.NewForConfigOrDie(cfg), w
}

// createRestrictedNamespace creates a namespace that enforces the restricted
// Pod Security profile, and warns about it, at the latest version.
// It is deleted when the calling node ends.
func createRestrictedNamespace(ctx context.Context, name string) {
	GinkgoHelper()
	cluster.namespace(ctx, name, map[string]string{
		"pod-security.kubernetes.io/enforce":         "restricted",
		"pod-security.kubernetes.io/enforce-version": "latest",
		"pod-security.kubernetes.io/warn":            "restricted",
		"pod-security.kubernetes.io/warn-version":    "latest",
	})
}

// refusedPodCreations are the signs of pods a ReplicaSet in ns could not
// create: ReplicaFailure conditions and FailedCreate events.
func refusedPodCreations(ctx context.Context, ns string) ([]string, error) {
	var out []string
	rss, err := cs.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for _, rs := range rss.Items {
		for _, c := range rs.Status.Conditions {
			if c.Type == appsv1.ReplicaSetReplicaFailure && c.Status == corev1.ConditionTrue {
				out = append(out, fmt.Sprintf("ReplicaSet %s: %s: %s", rs.Name, c.Reason, c.Message))
			}
		}
	}
	events, err := cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "reason=FailedCreate"})
	if err != nil {
		return nil, err
	}
	for _, e := range events.Items {
		out = append(out, fmt.Sprintf("event on %s %s: %s", e.InvolvedObject.Kind, e.InvolvedObject.Name, e.Message))
	}
	return out, nil
}

// expectReadyPods waits until the pods d selects number d's replicas and
// are all Ready, and no pod creation was refused.
func expectReadyPods(ctx context.Context, ns, name string) {
	GinkgoHelper()
	eventually(ctx, func(g Gomega) {
		d, err := cs.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
		g.Expect(err).NotTo(HaveOccurred())
		pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(pods.Items).To(HaveLen(int(ptr.Deref(d.Spec.Replicas, 1))))
		for _, p := range pods.Items {
			g.Expect(p.Status.Conditions).To(ContainElement(And(
				HaveField("Type", corev1.PodReady), HaveField("Status", corev1.ConditionTrue))), "pod %s", p.Name)
		}
	}).Should(Succeed())
	Expect(refusedPodCreations(ctx, ns)).To(BeEmpty())
}

// podSecurityRestrictedSpecs are the "Pod Security restricted" specs of the security container (above).
func podSecurityRestrictedSpecs() {
	Describe("Pod Security restricted", func() {
		It("admits and runs the memcached pods the operator creates", func(ctx SpecContext) {
			const ns = "restricted-memcached"
			createRestrictedNamespace(ctx, ns)
			Expect(k8s.Create(ctx, gen.Memcached(ns, "cache", gen.WithSize(3)))).To(Succeed())
			eventually(ctx, func() error {
				_, err := cs.AppsV1().Deployments(ns).Get(ctx, "cache", metav1.GetOptions{})
				return err
			}).Should(Succeed())
			expectReadyPods(ctx, ns, "cache")
		}, SpecTimeout(3*readyTimeout))

		DescribeTable("the manager pod",
			func(ctx SpecContext, ns string, manager func() (*appsv1.Deployment, error), admitted bool) {
				d, err := manager()
				Expect(err).NotTo(HaveOccurred())
				createRestrictedNamespace(ctx, ns)
				d.Namespace = ns
				d.ResourceVersion = ""
				if sa := d.Spec.Template.Spec.ServiceAccountName; sa != "" {
					Expect(k8s.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: sa}})).To(Succeed())
				}

				// Created for real, not dry-run, on the kwok node, which runs
				// the pods without their image or Secrets: their admission
				// is seen as well as the Deployment's. Where a pod runs
				// changes nothing Pod Security checks.
				pod := &d.Spec.Template.Spec
				pod.NodeSelector, pod.Tolerations = onFakeNode()
				clientset, recorder := clientsetWithWarnings()
				_, err = clientset.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{})
				Expect(err).NotTo(HaveOccurred())
				if admitted {
					Expect(recorder.warnings()).To(BeEmpty())
					expectReadyPods(ctx, ns, d.Name)
					return
				}
				Expect(recorder.warnings()).To(ContainElement(ContainSubstring("would violate PodSecurity")))
				eventually(ctx, func() ([]string, error) { return refusedPodCreations(ctx, ns) }).Should(ContainElement(ContainSubstring("violates PodSecurity")))
			},
			Entry("of kustomize build config/default is admitted and runs", "restricted-config-default",
				func() (*appsv1.Deployment, error) {
					return deploymentIn(configDefaultObjects, manifest.ManagerDeployment)
				}, true),
			Entry("of the CSV's install strategy is admitted and runs", "restricted-csv",
				func() (*appsv1.Deployment, error) {
					b, err := manifest.Bundle()
					if err != nil {
						return nil, err
					}
					return manifest.Deployment(b.CSV)
				}, true),
			// The control: the same checks see a refusal when there is one.
			Entry("made privileged is warned about and its pods refused", "restricted-control",
				func() (*appsv1.Deployment, error) {
					d := gen.UnrelatedDeployment("", "privileged", 1)
					sc := d.Spec.Template.Spec.Containers[0].SecurityContext
					sc.Privileged, sc.AllowPrivilegeEscalation = ptr.To(true), nil
					return d, nil
				}, false),
		)
	})
}

// proxySettings are the cluster-wide proxy the operator is started with, as
// OLM injects it: a proxy that needs a user name and password.
type proxySettings struct {
	user, password                 string
	httpProxy, httpsProxy, noProxy string
}

func newProxySettings(password string) proxySettings {
	p := proxySettings{user: "proxyuser", password: password}
	// proxy.invalid never resolves: nothing is ever sent to it. The
	// operator's own API calls go to 127.0.0.1, which Go never proxies.
	p.httpProxy = fmt.Sprintf("http://%s:%s@proxy.invalid:3128", p.user, p.password)
	p.httpsProxy = fmt.Sprintf("http://%s:%s@proxy.invalid:3129", p.user, p.password)
	p.noProxy = "127.0.0.1,localhost,.svc,.cluster.local"
	return p
}

// environ is the operator's proxy environment.
func (p proxySettings) environ() []string {
	return []string{"HTTP_PROXY=" + p.httpProxy, "HTTPS_PROXY=" + p.httpsProxy, "NO_PROXY=" + p.noProxy}
}

// leakIn returns the surroundings of the first trace of the credentials in
// data (the password, or user:password base64-encoded as in a
// Proxy-Authorization header), with the secret itself masked so the failure
// message does not repeat it; "" when there is none.
func (p proxySettings) leakIn(data []byte) string {
	basic := base64.StdEncoding.EncodeToString([]byte(p.user + ":" + p.password))
	for _, s := range []string{p.password, basic} {
		if i := bytes.Index(data, []byte(s)); i >= 0 {
			lo, hi := max(0, i-200), min(len(data), i+len(s)+200)
			return strings.ReplaceAll(string(data[lo:hi]), s, "<PROXY CREDENTIALS>")
		}
	}
	return ""
}

// proxyCredentialsSpecs are the "Proxy credentials" specs of the security container (above).
func proxyCredentialsSpecs() {
	Describe("Proxy credentials", Ordered, func() {
		const (
			okNS      = "proxy"
			refusedNS = "proxy-refused"
		)

		BeforeAll(func(ctx SpecContext) {
			for _, ns := range []string{okNS, refusedNS} {
				Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
			}
			// A quota of no Deployments makes the operator's first write in
			// refusedNS fail: the error path is the one that tends to dump
			// objects into logs, events and conditions.
			Expect(k8s.Create(ctx, &corev1.ResourceQuota{
				ObjectMeta: metav1.ObjectMeta{Namespace: refusedNS, Name: "no-deployments"},
				Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{
					"count/deployments.apps": resource.MustParse("0"),
				}},
			})).To(Succeed())
			Expect(k8s.Create(ctx, gen.Memcached(okNS, "cache", gen.WithSize(2)))).To(Succeed())
			Expect(k8s.Create(ctx, gen.Memcached(refusedNS, "refused", gen.WithSize(2)))).To(Succeed())
		})

		It("puts them into the memcached Deployment, which is the product", func(ctx SpecContext) {
			want := map[string]string{
				"HTTP_PROXY": proxy.httpProxy, "http_proxy": proxy.httpProxy,
				"HTTPS_PROXY": proxy.httpsProxy, "https_proxy": proxy.httpsProxy,
				"NO_PROXY": proxy.noProxy, "no_proxy": proxy.noProxy,
			}
			eventually(ctx, func(g Gomega) {
				d := &appsv1.Deployment{}
				g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: okNS, Name: "cache"}, d)).To(Succeed())
				g.Expect(d.Spec.Template.Spec.Containers).NotTo(BeEmpty())
				for _, c := range d.Spec.Template.Spec.Containers {
					// The exporter speaks to memcached on loopback and
					// nothing else: the credentials stay out of it.
					if c.Name == monitoring.ExporterContainer {
						g.Expect(c.Env).To(BeEmpty(), "container %s", c.Name)
						continue
					}
					got := map[string]string{}
					for _, e := range c.Env {
						got[e.Name] = e.Value
					}
					for name, value := range want {
						g.Expect(got).To(HaveKeyWithValue(name, value), "container %s", c.Name)
					}
				}
			}).Should(Succeed())
		}, SpecTimeout(3*readyTimeout))

		It("reports the failed write as an Event and a Degraded condition", func(ctx SpecContext) {
			eventually(ctx, func(g Gomega) {
				mc := &cachev1.Memcached{}
				g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: refusedNS, Name: "refused"}, mc)).To(Succeed())
				c := meta.FindStatusCondition(mc.Status.Conditions, cachev1.ConditionDegraded)
				g.Expect(c).NotTo(BeNil())
				g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
				g.Expect(c.Reason).To(Equal(cachev1.ReasonReconcileFailed))
				g.Expect(c.Message).To(ContainSubstring("exceeded quota"))
			}).Should(Succeed())
			eventually(ctx, func(g Gomega) {
				events, err := cs.CoreV1().Events(refusedNS).List(ctx, metav1.ListOptions{})
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(events.Items).To(ContainElement(And(
					HaveField("Reason", "ReconcileFailed"),
					HaveField("InvolvedObject.Name", "refused"),
					HaveField("Message", ContainSubstring("exceeded quota")),
				)))
			}).Should(Succeed())
		}, SpecTimeout(3*readyTimeout))

		It("keeps them out of every Event, Memcached, Service and PodDisruptionBudget", func(ctx SpecContext) {
			// After the two specs above: the Deployment carries the proxy and
			// the failure has been recorded, so there was something to leak.
			lists := map[string]client.ObjectList{
				"Events":               &corev1.EventList{},
				"Memcacheds":           &cachev1.MemcachedList{},
				"Services":             &corev1.ServiceList{},
				"PodDisruptionBudgets": &policyv1.PodDisruptionBudgetList{},
			}
			for kind, list := range lists {
				eventually(ctx, func(g Gomega) {
					g.Expect(k8s.List(ctx, list)).To(Succeed())
					g.Expect(meta.LenList(list)).To(BeNumerically(">", 0), "no %s at all: nothing to check", kind)
				}).Should(Succeed())
				data, err := json.Marshal(list)
				Expect(err).NotTo(HaveOccurred())
				Expect(proxy.leakIn(data)).To(BeEmpty(), "%s hold the proxy credentials", kind)
			}
		}, SpecTimeout(3*readyTimeout))

		It("keeps them out of the operator's log, the failed write included", func() {
			data, err := os.ReadFile(op.LogPath())
			Expect(err).NotTo(HaveOccurred())
			// The failure was logged, so the error path is in what is checked.
			Expect(string(data)).To(MatchRegexp(`Reconciler error.*refused`))
			Expect(checkOperatorLogs()).To(Succeed())
		})
	})
}
