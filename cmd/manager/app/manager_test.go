package app

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/example-inc/memcached-operator/api/v1/gen"
	"github.com/example-inc/memcached-operator/certs/certstest"
	"github.com/example-inc/memcached-operator/controllers/ingresspolicy"
	"github.com/example-inc/memcached-operator/hack/repo"
	"github.com/example-inc/memcached-operator/webhooks/drain"
)

// TestServe runs the manager as Main wires it, in this process, against a
// local cluster: the environment OLM sets reaches the reconciler, the proxy
// set after the process's first API client carries the manager's own
// requests, proxy credentials stay out of the log, and a drain fails
// /readyz and closes webhook connections. The suites that run the operator
// as a process prove the same from outside, but only make test runs on
// every change. In a pod, the manager keeps the NetworkPolicies of its
// pods: the webhook port's, and none for the metrics server it does not
// run.
func TestServe(t *testing.T) {
	g := NewWithT(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	logged := gbytes.NewBuffer()
	ctrl.SetLogger(zap.New(zap.WriteTo(logged)))

	apiServerConfig, k8s := startAPIServer(t, g)
	for _, ns := range []string{"watched", "unwatched", "operator"} {
		g.Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
	}
	managerPod, managerDeployment := managerObjects(ctx, g, k8s, "operator")
	// A metrics policy left from a manager that served metrics.
	stale := &networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "operator", Name: ingresspolicy.MetricsPolicy,
		Labels: map[string]string{"app.kubernetes.io/managed-by": "memcached-operator"}}}
	g.Expect(k8s.Create(ctx, stale)).To(Succeed())

	// The manager reaches the API server by a name only the proxy knows, so
	// a request that bypasses the proxy fails instead of reaching it.
	apiServer, err := url.Parse(apiServerConfig.Host)
	g.Expect(err).NotTo(HaveOccurred())
	proxy := startConnectProxy(t, "apiserver.test:"+apiServer.Port(), apiServer.Host)
	cfg := rest.CopyConfig(apiServerConfig)
	cfg.Host = "https://apiserver.test:" + apiServer.Port()
	cfg.ServerName = "localhost"
	cfg.Dial = dialLoopbackOnly

	// As under OLM: Go reads the proxy environment at the process's first
	// request (the Subscription's read), before the proxy variables are set.
	for _, name := range []string{"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy"} {
		t.Setenv(name, "")
	}
	_, _ = http.ProxyFromEnvironment(&http.Request{URL: &url.URL{Scheme: "https", Host: "apiserver.test"}})
	proxyURL := "http://operator:s3cret-pw@" + proxy.addr
	for k, v := range map[string]string{"HTTPS_PROXY": proxyURL, "NO_PROXY": ".cluster.local",
		"RELATED_IMAGE_MEMCACHED": "registry.test/memcached:wired", "WATCH_NAMESPACE": "watched", "ENABLE_WEBHOOKS": "",
		"POD_NAMESPACE": managerPod.Namespace, "POD_NAME": managerPod.Name, "NETWORK_POLICIES": ""} {
		t.Setenv(k, v)
	}

	ports, err := certstest.FreePorts(2)
	g.Expect(err).NotTo(HaveOccurred())
	probeAddr := "127.0.0.1:" + strconv.Itoa(ports[1])
	o, err := parseOptions([]string{
		"--webhook-cert-mode=local", "--webhook-cert-dir=" + t.TempDir(), "--webhook-port=" + strconv.Itoa(ports[0]),
		"--webhook-manifests=" + filepath.Join(repo.WebhookDir(), "manifests.yaml"),
		"--health-probe-bind-address=" + probeAddr, "--metrics-bind-address=0",
	})
	g.Expect(err).NotTo(HaveOccurred())
	stopping := &drain.Drain{}
	served := make(chan error, 1)
	go func() { served <- serve(ctx, o, cfg, stopping) }()
	probe := &http.Client{Timeout: 5 * time.Second}
	readyz := func() (int, error) {
		select {
		case err := <-served:
			return 0, StopTrying("the manager stopped").Wrap(err)
		default:
			return getStatus(probe, "http://"+probeAddr+"/readyz")
		}
	}
	g.Eventually(readyz).WithTimeout(time.Minute).Should(Equal(http.StatusOK), "ready once its webhooks serve")

	// Through the webhooks (the size is defaulted) to the reconciler.
	g.Eventually(func() error { return k8s.Create(ctx, gen.Memcached("unwatched", "ignored")) }).
		WithTimeout(30 * time.Second).Should(Succeed())
	g.Expect(k8s.Create(ctx, gen.Memcached("watched", "cache"))).To(Succeed())
	var dep appsv1.Deployment
	g.Eventually(func() error { return k8s.Get(ctx, client.ObjectKey{Namespace: "watched", Name: "cache"}, &dep) }).
		WithTimeout(30 * time.Second).Should(Succeed())
	c := dep.Spec.Template.Spec.Containers[0]
	g.Expect(c.Image).To(Equal("registry.test/memcached:wired"), "RELATED_IMAGE_MEMCACHED")
	g.Expect(c.Env).To(ContainElement(corev1.EnvVar{Name: "HTTPS_PROXY", Value: proxyURL}), "the proxy in memcached's env")
	g.Expect(dep.Spec.Replicas).To(HaveValue(BeEquivalentTo(3)), "defaulted by the mutating webhook")
	// The unwatched Memcached was created first: had the manager watched
	// its namespace, it would have been reconciled first.
	err = k8s.Get(ctx, client.ObjectKey{Namespace: "unwatched", Name: "ignored"}, &appsv1.Deployment{})
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "a Deployment for a Memcached outside WATCH_NAMESPACE: %v", err)

	expectNetworkPolicies(ctx, g, k8s, managerDeployment, int32(ports[0]))

	g.Expect(proxy.tunnels.Load()).To(BeNumerically(">", 0), "the manager's requests went through the proxy")
	g.Expect(proxy.refused()).To(BeEmpty())
	g.Expect(string(logged.Contents())).To(ContainSubstring(`"value":"http://REDACTED@`+proxy.addr+`"`), "the proxy is logged, redacted")
	g.Expect(string(logged.Contents())).NotTo(ContainSubstring("s3cret-pw"), "the proxy's password in the log")

	// A drain: not ready, and each webhook answer closes its connection.
	webhookURL := fmt.Sprintf("https://127.0.0.1:%d/validate-cache-example-com-v1-memcached", ports[0])
	g.Expect(webhookCloses(webhookURL)).To(BeFalse(), "a webhook answer closes its connection before the drain")
	stopping.Stop()
	g.Eventually(readyz).Should(Equal(http.StatusInternalServerError), "ready while draining")
	g.Expect(webhookCloses(webhookURL)).To(BeTrue(), "a webhook answer keeps its connection while draining")

	cancel()
	g.Eventually(served).WithTimeout(time.Minute).Should(Receive(BeNil()))
}

// managerObjects are the manager's Deployment and pod in namespace ns, as
// the API server holds them (no controller runs them here).
func managerObjects(ctx context.Context, g Gomega, k8s client.Client, ns string) (*corev1.Pod, *appsv1.Deployment) {
	d := gen.ManagerDeployment(ns, "controller-manager", map[string]string{"control-plane": "controller-manager"})
	g.Expect(k8s.Create(ctx, d)).To(Succeed())
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "controller-manager-5d8f-x2x4b",
			Labels: map[string]string{"control-plane": "controller-manager", "pod-template-hash": "5d8f"}},
		Spec: d.Spec.Template.Spec,
	}
	g.Expect(k8s.Create(ctx, pod)).To(Succeed())
	return pod, d
}

// expectNetworkPolicies: the manager keeps one NetworkPolicy beside d, the
// webhook port's, owned by d, and puts it back once deleted; the metrics
// policy of a server it does not run is gone.
func expectNetworkPolicies(ctx context.Context, g Gomega, k8s client.Client, d *appsv1.Deployment, webhookPort int32) {
	webhook := client.ObjectKey{Namespace: d.Namespace, Name: ingresspolicy.WebhookPolicy}
	kept := func(g Gomega) {
		var policies networkingv1.NetworkPolicyList
		g.Expect(k8s.List(ctx, &policies, client.InNamespace(d.Namespace))).To(Succeed())
		g.Expect(policies.Items).To(ConsistOf(And(
			HaveField("Name", webhook.Name),
			HaveField("OwnerReferences", ConsistOf(And(HaveField("Kind", "Deployment"), HaveField("UID", d.UID)))),
			HaveField("Spec.PodSelector.MatchLabels", d.Spec.Selector.MatchLabels),
			HaveField("Spec.Ingress", ConsistOf(HaveField("Ports", ConsistOf(HaveField("Port.IntVal", webhookPort))))),
		)))
	}
	g.Eventually(kept).WithTimeout(30 * time.Second).Should(Succeed())
	g.Expect(k8s.Delete(ctx, &networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: webhook.Namespace, Name: webhook.Name}})).To(Succeed())
	g.Eventually(kept).WithTimeout(30*time.Second).Should(Succeed(), "the deleted policy back")
}

func getStatus(c *http.Client, target string) (int, error) {
	resp, err := c.Get(target)
	if err != nil {
		return 0, err
	}
	defer func() { _ = resp.Body.Close() }()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, nil
}

// webhookCloses posts an (empty) AdmissionReview to target and says whether
// the answer asks to close the connection.
func webhookCloses(target string) (bool, error) {
	// The webhook's answer headers are under test here, not its
	// certificate, which the API server verifies in every create above.
	c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // see above
	}}
	resp, err := c.Post(target, "application/json", strings.NewReader(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}`))
	if err != nil {
		return false, err
	}
	defer func() { _ = resp.Body.Close() }()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.Close, nil
}

// dialLoopbackOnly refuses every address but a loopback IP, so a client that
// does not use the proxy fails here rather than resolving a name off the
// machine.
func dialLoopbackOnly(ctx context.Context, network, address string) (net.Conn, error) {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return nil, fmt.Errorf("refusing to dial %s: not through the proxy", address)
	}
	var d net.Dialer
	return d.DialContext(ctx, network, address)
}

// connectProxy is an HTTP CONNECT proxy on loopback that tunnels one name
// to one address, and only for the credentials of the test's proxy URL.
type connectProxy struct {
	addr    string
	tunnels atomic.Int64

	mu      sync.Mutex
	refusal []string
}

func startConnectProxy(t *testing.T, name, target string) *connectProxy {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &connectProxy{addr: l.Addr().String()}
	srv := &http.Server{Handler: p.handler(name, target), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return p
}

func (p *connectProxy) handler(name, target string) http.Handler {
	wantAuth := "Basic " + base64.StdEncoding.EncodeToString([]byte("operator:s3cret-pw"))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodConnect || r.Host != name || r.Header.Get("Proxy-Authorization") != wantAuth {
			p.refuse(fmt.Sprintf("%s %s", r.Method, r.Host))
			http.Error(w, "refused", http.StatusForbidden)
			return
		}
		upstream, err := net.Dial("tcp", target)
		if err != nil {
			p.refuse(err.Error())
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		conn, buf, err := http.NewResponseController(w).Hijack()
		if err != nil {
			_ = upstream.Close()
			return
		}
		if _, err := conn.Write([]byte("HTTP/1.1 200 Connection established\r\n\r\n")); err != nil {
			_ = conn.Close()
			_ = upstream.Close()
			return
		}
		p.tunnels.Add(1)
		go func() {
			defer func() { _ = upstream.Close() }()
			_, _ = io.Copy(upstream, buf)
		}()
		go func() {
			defer func() { _ = conn.Close() }()
			_, _ = io.Copy(conn, upstream)
		}()
	})
}

func (p *connectProxy) refuse(why string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.refusal = append(p.refusal, why)
}

func (p *connectProxy) refused() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.refusal...)
}
