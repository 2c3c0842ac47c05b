package e2e

import (
	"context"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The cluster-wide proxy, as an OpenShift cluster publishes it. The
// password is what the operator's log must never show.
const (
	proxyPassword = "s3cr3t-pw"
	httpProxy     = "http://olmuser:" + proxyPassword + "@proxy.example.com:3128"
	httpsProxy    = "http://olmuser:" + proxyPassword + "@proxy.example.com:3129"
	noProxy       = ".cluster.local,.svc,10.96.0.0/16,127.0.0.1,localhost"
)

// clusterProxyEnv is what OLM injects into the operator's containers from
// the Proxy status: the three upper-case names only.
func clusterProxyEnv() map[string]string {
	return map[string]string{"HTTP_PROXY": httpProxy, "HTTPS_PROXY": httpsProxy, "NO_PROXY": noProxy}
}

// memcachedProxyEnv is what the operator puts into every memcached
// container (controllers/proxyenv): each variable in upper and lower case.
func memcachedProxyEnv() map[string]string {
	return map[string]string{
		"HTTP_PROXY": httpProxy, "HTTPS_PROXY": httpsProxy, "NO_PROXY": noProxy,
		"http_proxy": httpProxy, "https_proxy": httpsProxy, "no_proxy": noProxy,
	}
}

var proxyGVK = schema.GroupVersionKind{Group: "config.openshift.io", Version: "v1", Kind: "Proxy"}

// createClusterProxy creates the Proxy `cluster` and sets its status, which
// is what olm reads (on OpenShift the network operator copies the spec there,
// adding the cluster's own networks to noProxy). The status goes through the
// status subresource: a create drops it.
func createClusterProxy(ctx context.Context, c client.Client) {
	proxy := &unstructured.Unstructured{}
	proxy.SetGroupVersionKind(proxyGVK)
	proxy.SetName("cluster")
	fields := map[string]any{"httpProxy": httpProxy, "httpsProxy": httpsProxy, "noProxy": noProxy}
	ExpectWithOffset(1, unstructured.SetNestedField(proxy.Object, fields, "spec")).To(Succeed())
	ExpectWithOffset(1, c.Create(ctx, proxy)).To(Succeed())
	ExpectWithOffset(1, unstructured.SetNestedField(proxy.Object, fields, "status")).To(Succeed())
	ExpectWithOffset(1, c.Status().Update(ctx, proxy)).To(Succeed())

	got := &unstructured.Unstructured{}
	got.SetGroupVersionKind(proxyGVK)
	ExpectWithOffset(1, c.Get(ctx, client.ObjectKey{Name: "cluster"}, got)).To(Succeed())
	status, _, _ := unstructured.NestedStringMap(got.Object, "status")
	ExpectWithOffset(1, status).To(Equal(map[string]string{"httpProxy": httpProxy, "httpsProxy": httpsProxy, "noProxy": noProxy}))
}
