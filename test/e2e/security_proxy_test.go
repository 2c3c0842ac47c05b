package e2e

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
	"github.com/example-inc/memcached-operator/api/v1/gen"
	"github.com/example-inc/memcached-operator/controllers/monitoring"
)

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

// proxyCredentialsSpecs are the "Proxy credentials" specs of the security container (security_test.go).
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
