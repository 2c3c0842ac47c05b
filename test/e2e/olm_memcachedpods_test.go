package e2e

import (
	"context"
	"slices"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
	"github.com/example-inc/memcached-operator/controllers/monitoring"
)

// memcachedPodUIDs are the pods of a Memcached's Deployment, name to UID.
func memcachedPodUIDs(ctx context.Context, g Gomega, mc *cachev1.Memcached) map[string]types.UID {
	d := &appsv1.Deployment{}
	g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(mc), d)).To(Succeed())
	var pods corev1.PodList
	g.Expect(k8s.List(ctx, &pods, client.InNamespace(mc.Namespace), client.MatchingLabels(d.Spec.Selector.MatchLabels))).To(Succeed())
	out := map[string]types.UID{}
	for _, p := range pods.Items {
		out[p.Name] = p.UID
	}
	return out
}

// expectReconciledWithProxy waits until the Memcached's Deployment has
// size ready pods and every container of its pod template carries the six
// proxy variables with the cluster proxy's values, except the metrics
// exporter, which speaks to memcached on loopback alone and carries none.
func expectReconciledWithProxy(ctx context.Context, mc *cachev1.Memcached, size int32) *appsv1.Deployment {
	GinkgoHelper()
	d := &appsv1.Deployment{}
	Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(mc), d)).To(Succeed())
		g.Expect(d.Status.ReadyReplicas).To(Equal(size))
		containers := slices.Concat(d.Spec.Template.Spec.InitContainers, d.Spec.Template.Spec.Containers)
		g.Expect(containers).NotTo(BeEmpty())
		for _, c := range containers {
			if c.Name == monitoring.ExporterContainer {
				g.Expect(proxyVars(c.Env)).To(BeEmpty(), "container %s", c.Name)
				continue
			}
			g.Expect(proxyVars(c.Env)).To(Equal(memcachedProxyEnv()), "container %s", c.Name)
		}
	}).WithContext(ctx).WithTimeout(2 * time.Minute).Should(Succeed())
	return d
}

// proxyVars are the env entries of env whose name is a proxy variable, in
// either case.
func proxyVars(env []corev1.EnvVar) map[string]string {
	out := map[string]string{}
	for _, e := range env {
		if _, ok := memcachedProxyEnv()[e.Name]; ok {
			out[e.Name] = e.Value
		}
	}
	return out
}
