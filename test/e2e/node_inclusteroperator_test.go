package e2e

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
	"github.com/example-inc/memcached-operator/api/v1/gen"
	"github.com/example-inc/memcached-operator/hack/local-cluster/localcluster"
	"github.com/example-inc/memcached-operator/hack/repo"
	"github.com/example-inc/memcached-operator/test/framework/harness"
	"github.com/example-inc/memcached-operator/test/framework/manifest"
	"github.com/example-inc/memcached-operator/test/framework/scrape"
	"github.com/example-inc/memcached-operator/webhooks"
)

// What config/default installs, by name.
const (
	operatorNamespace  = "memcached-operator-system"
	operatorDeployment = "memcached-operator-controller-manager"
	metricsService     = "memcached-operator-controller-manager-metrics-service"
	metricsCertSecret  = "metrics-server-cert"
	metricsReaderRole  = "memcached-operator-metrics-reader"
)

var _ = Describe("the operator as a pod, installed with kubectl apply and cert-manager", Ordered, Label(labelInstall, labelMonitoring), func() {
	const ns = "apps"
	var c *realCluster

	var manifests []byte

	BeforeAll(func(ctx SpecContext) {
		c = cluster
		c.restrictedNamespace(ctx, ns)
		manifests = configDefault(map[string]string{
			"RELATED_IMAGE_MEMCACHED": memcachedA.Ref, "RELATED_IMAGE_MEMCACHED_EXPORTER": exporterImage.Ref})
		DeferCleanup(func(ctx SpecContext) {
			uninstall(ctx, manifests)
			Expect(client.IgnoreNotFound(c.k8s.Delete(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "scraper-metrics-reader"}}))).To(Succeed())
		}, NodeTimeout(4*time.Minute))
	}, NodeTimeout(5*time.Minute))

	AfterEach(func(ctx SpecContext) {
		if CurrentSpecReport().Failed() {
			out, _ := kubectl(ctx, nil, "-n", operatorNamespace, "logs", "deploy/"+operatorDeployment, "--tail=40")
			GinkgoWriter.Printf("operator log:\n%s\n", out)
		}
	})

	// managerPod waits for the one manager pod, Ready (on the real node of
	// a local cluster), and returns it.
	managerPod := func(ctx context.Context) corev1.Pod {
		GinkgoHelper()
		var pod corev1.Pod
		eventually(ctx, func(g Gomega) {
			var pods corev1.PodList
			g.Expect(c.k8s.List(ctx, &pods, client.InNamespace(operatorNamespace), client.MatchingLabels{"control-plane": "controller-manager"})).To(Succeed())
			g.Expect(pods.Items).To(HaveLen(1))
			pod = pods.Items[0]
			if c.local != nil {
				g.Expect(pod.Spec.NodeName).To(Equal(localcluster.RealNodeName))
			}
			g.Expect(harness.PodReady(&pod)).To(BeTrue(), "manager pod ready")
		}).Should(Succeed())
		return pod
	}

	It("runs the manager pod, whose log the API server reads through the kubelet", func(ctx SpecContext) {
		start := time.Now()
		Expect(kubectl(ctx, manifests, "apply", "-f", "-")).Error().NotTo(HaveOccurred())
		pod := managerPod(ctx)
		AddReportEntry("manager pod Ready after kubectl apply", time.Since(start).Round(time.Millisecond).String())

		log, err := kubectl(ctx, nil, "-n", operatorNamespace, "logs", pod.Name)
		Expect(err).NotTo(HaveOccurred())
		Expect(string(log)).To(ContainSubstring("starting manager"))
	}, SpecTimeout(5*time.Minute))

	It("runs the manager as the image's nonroot user, reaching the API server through the kubernetes Service", Label(labelHost), func(ctx SpecContext) {
		pod := managerPod(ctx)
		By("reading the manager process's environment from the host")
		pid, err := c.local.ContainerPID(ctx, pod.Status.ContainerStatuses[0].ContainerID)
		Expect(err).NotTo(HaveOccurred())
		env := environ(pid)
		// In-cluster configuration: the kubernetes Service, which kube-proxy
		// sends to the API server on the pod network's gateway.
		Expect(env).To(HaveKeyWithValue("KUBERNETES_SERVICE_HOST", "10.96.0.1"))
		Expect(env).To(HaveKeyWithValue("KUBERNETES_SERVICE_PORT", "443"))
		Expect(env).NotTo(HaveKey("KUBECONFIG"))
		status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		Expect(err).NotTo(HaveOccurred())
		Expect(string(status)).To(MatchRegexp(`(?m)^Uid:\s+65532\s+65532\s+65532\s+65532$`), "the image's nonroot user")
	}, SpecTimeout(2*time.Minute))

	It("keeps the NetworkPolicies of its pod, which config/default does not ship", func(ctx SpecContext) {
		var pods corev1.PodList
		Expect(c.k8s.List(ctx, &pods, client.InNamespace(operatorNamespace), client.MatchingLabels{"control-plane": "controller-manager"})).To(Succeed())
		Expect(pods.Items).To(HaveLen(1))
		expectNetworkPolicies(ctx, "kubectl install in "+operatorNamespace, &pods.Items[0], []string{ns})
	}, SpecTimeout(2*time.Minute))

	It("is called by the API server through the webhook Service: a bad Memcached is refused, a good one serves", func(ctx SpecContext) {
		By("checking the webhooks name their Service, with the injected CA")
		eventually(ctx, func(g Gomega) {
			var list admissionregistrationv1.ValidatingWebhookConfigurationList
			g.Expect(c.k8s.List(ctx, &list)).To(Succeed())
			g.Expect(list.Items).To(HaveLen(1))
			for _, w := range list.Items[0].Webhooks {
				g.Expect(w.ClientConfig.URL).To(BeNil(), "webhook %s", w.Name)
				g.Expect(w.ClientConfig.Service).NotTo(BeNil(), "webhook %s", w.Name)
				g.Expect(w.ClientConfig.CABundle).NotTo(BeEmpty(), "webhook %s", w.Name)
			}
		}).Should(Succeed())

		// kube-proxy programs the Service a moment after the pod is Ready;
		// until then the API server's calls are refused.
		eventually(ctx, func() error {
			return c.k8s.Create(ctx, gen.Memcached(ns, "too-big", gen.WithSize(40)))
		}).Should(MatchError(And(ContainSubstring(denied), ContainSubstring("spec.size: Invalid value: 40"))))

		mc := gen.Memcached(ns, "cache")
		Expect(c.k8s.Create(ctx, mc)).To(Succeed())
		want := webhooks.DefaultSizePolicy().Default
		Expect(mc.Spec.Size).To(HaveValue(Equal(want)), "defaulted by the mutating webhook")
		c.serving(ctx, mc, int(want), memcachedA.Ref)
		Expect(c.k8s.Get(ctx, client.ObjectKeyFromObject(mc), mc)).To(Succeed())
		out, err := c.throughClient(ctx, ns, mc.Status.Endpoint, []byte("set greeting 0 0 5\r\nhello\r\nget greeting\r\nstats settings\r\nquit\r\n"), restrictedClient...)
		Expect(err).NotTo(HaveOccurred())
		Expect(out).To(HavePrefix("STORED\r\nVALUE greeting 0 5\r\nhello\r\nEND\r\n"), "a client pod in %s, through %s", ns, mc.Status.Endpoint)
		Expect(out).To(ContainSubstring("STAT maxbytes 67108864\r\n"), "the default memory")
	}, SpecTimeout(4*time.Minute))

	It("serves on every pod's address, reached from this host", Label(labelHost), func(ctx SpecContext) {
		mc := &cachev1.Memcached{}
		Expect(c.k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "cache"}, mc)).To(Succeed())
		for _, p := range c.serving(ctx, mc, int(webhooks.DefaultSizePolicy().Default), memcachedA.Ref) {
			Expect(serves(ctx, p, 100)).To(HaveKeyWithValue("maxbytes", "67108864"))
		}
	}, SpecTimeout(2*time.Minute))

	It("serves /metrics to a bound ServiceAccount token and refuses an anonymous caller", Label(labelHost), func(ctx SpecContext) {
		Expect(createServiceAccount(ctx, ns, "scraper")).To(Succeed())
		Expect(bindClusterRole(ctx, "scraper-metrics-reader", metricsReaderRole, ns, "scraper")).To(Succeed())
		token, err := c.local.ServiceAccountToken(ctx, ns, "scraper")
		Expect(err).NotTo(HaveOccurred())

		svc := &corev1.Service{}
		Expect(c.k8s.Get(ctx, client.ObjectKey{Namespace: operatorNamespace, Name: metricsService}, svc)).To(Succeed())
		secret := &corev1.Secret{}
		Expect(c.k8s.Get(ctx, client.ObjectKey{Namespace: operatorNamespace, Name: metricsCertSecret}, secret)).To(Succeed())
		roots := x509.NewCertPool()
		Expect(roots.AppendCertsFromPEM(secret.Data["ca.crt"])).To(BeTrue())
		// The ClusterIP, through kube-proxy, and the name cert-manager's
		// certificate is for.
		url := fmt.Sprintf("https://%s:%d/metrics", svc.Spec.ClusterIP, svc.Spec.Ports[0].Port)
		hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{
			RootCAs: roots, ServerName: metricsService + "." + operatorNamespace + ".svc", MinVersion: tls.VersionTLS12,
		}}}
		eventually(ctx, func(g Gomega) {
			code, body, err := scrape.Get(ctx, hc, url, token)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(code).To(Equal(http.StatusOK))
			g.Expect(body).To(ContainSubstring(`controller_runtime_reconcile_total{controller="memcached"`))
		}).Should(Succeed())
		code, _, err := scrape.Get(ctx, hc, url, "")
		Expect(err).NotTo(HaveOccurred())
		Expect(code).To(Equal(http.StatusUnauthorized))
	}, SpecTimeout(3*time.Minute))
})

// configDefault is `kustomize build config/default` with the operator image
// built from this tree (as make deploy IMG=... sets it) and the images the
// node has in the manager's RELATED_IMAGE_* variables named in
// relatedImages, as a disconnected install points them at a mirror.
func configDefault(relatedImages map[string]string) []byte {
	GinkgoHelper()
	out, err := harness.KustomizeBuild(filepath.Join(repo.Root(), "config", "default"))
	Expect(err).NotTo(HaveOccurred())
	objs, err := manifest.Decode(out)
	Expect(err).NotTo(HaveOccurred())
	var docs [][]byte
	for _, u := range objs {
		if u.GetKind() == "Deployment" && u.GetName() == operatorDeployment {
			d := &appsv1.Deployment{}
			Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, d)).To(Succeed())
			for i := range d.Spec.Template.Spec.Containers {
				c := &d.Spec.Template.Spec.Containers[i]
				if c.Name != "manager" {
					continue
				}
				c.Image, c.ImagePullPolicy = operatorRef, corev1.PullIfNotPresent
				set := map[string]bool{}
				for j := range c.Env {
					if image, ok := relatedImages[c.Env[j].Name]; ok {
						c.Env[j].Value, set[c.Env[j].Name] = image, true
					}
				}
				Expect(set).To(HaveLen(len(relatedImages)), "config/manager gives the manager every one of %v", relatedImages)
			}
			b, err := yaml.Marshal(d)
			Expect(err).NotTo(HaveOccurred())
			docs = append(docs, b)
			continue
		}
		b, err := yaml.Marshal(u.Object)
		Expect(err).NotTo(HaveOccurred())
		docs = append(docs, b)
	}
	Expect(strings.Count(string(bytes.Join(docs, nil)), "image: "+operatorRef)).To(Equal(1), "the manager container found")
	return bytes.Join(docs, []byte("---\n"))
}
