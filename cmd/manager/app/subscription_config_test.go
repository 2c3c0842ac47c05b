package app

import (
	"context"
	"maps"
	"testing"

	. "github.com/onsi/gomega"
	"github.com/operator-framework/api/crds"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// mapEnv is an environment in a map.
type mapEnv map[string]string

func (m mapEnv) LookupEnv(name string) (string, bool) { v, ok := m[name]; return v, ok }
func (m mapEnv) Setenv(name, value string) error      { m[name] = value; return nil }
func (m mapEnv) Unsetenv(name string) error           { delete(m, name); return nil }

const (
	csvImage  = "docker.io/library/memcached:1.6"
	subImage  = "registry.example.com/memcached:1.6"
	withCreds = "http://user:s3cret@proxy.example.com:3128"
)

var fromSecret = &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
	LocalObjectReference: corev1.LocalObjectReference{Name: "proxy"}, Key: "url"}}

func TestOverlayEnv(t *testing.T) {
	// What OLM's first rollout gives the manager: the CSV's env and the
	// cluster's proxy.
	firstRollout := map[string]string{
		"RELATED_IMAGE_MEMCACHED": csvImage, "WATCH_NAMESPACE": "",
		"HTTP_PROXY": "http://cluster-proxy:3128", "HTTPS_PROXY": "http://cluster-proxy:3128", "NO_PROXY": ".svc",
	}
	with := func(changes map[string]string, removed ...string) map[string]string {
		out := maps.Clone(firstRollout)
		maps.Copy(out, changes)
		for _, name := range removed {
			delete(out, name)
		}
		return out
	}
	for _, tc := range []struct {
		name                   string
		vars                   []corev1.EnvVar
		want                   map[string]string
		set, unset, unresolved []string
	}{
		{name: "no variables", want: firstRollout},
		{name: "the Subscription's image and size policy replace and join the CSV's",
			vars: []corev1.EnvVar{{Name: "RELATED_IMAGE_MEMCACHED", Value: subImage}, {Name: "MEMCACHED_MAX_SIZE", Value: "12"}},
			want: with(map[string]string{"RELATED_IMAGE_MEMCACHED": subImage, "MEMCACHED_MAX_SIZE": "12"}),
			set:  []string{"RELATED_IMAGE_MEMCACHED", "MEMCACHED_MAX_SIZE"}},
		{name: "already held: nothing changes", vars: []corev1.EnvVar{{Name: "RELATED_IMAGE_MEMCACHED", Value: csvImage}}, want: firstRollout},
		{name: "an empty value is set as empty", vars: []corev1.EnvVar{{Name: "MEMCACHED_MIN_SIZE", Value: ""}},
			want: with(map[string]string{"MEMCACHED_MIN_SIZE": ""}), set: []string{"MEMCACHED_MIN_SIZE"}},
		{name: "a name given twice: the last value",
			vars: []corev1.EnvVar{{Name: "MEMCACHED_MAX_SIZE", Value: "9"}, {Name: "MEMCACHED_MAX_SIZE", Value: "12"}},
			want: with(map[string]string{"MEMCACHED_MAX_SIZE": "12"}), set: []string{"MEMCACHED_MAX_SIZE"}},
		// OLM injects none of the cluster's proxy variables then.
		{name: "a proxy variable: the cluster's other proxy variables go", vars: []corev1.EnvVar{{Name: "HTTP_PROXY", Value: withCreds}},
			want: with(map[string]string{"HTTP_PROXY": withCreds}, "HTTPS_PROXY", "NO_PROXY"),
			set:  []string{"HTTP_PROXY"}, unset: []string{"HTTPS_PROXY", "NO_PROXY"}},
		{name: "a proxy variable set empty overrides too", vars: []corev1.EnvVar{{Name: "NO_PROXY", Value: ""}},
			want: with(map[string]string{"NO_PROXY": ""}, "HTTP_PROXY", "HTTPS_PROXY"),
			set:  []string{"NO_PROXY"}, unset: []string{"HTTP_PROXY", "HTTPS_PROXY"}},
		{name: "from a Secret, not in the environment: unresolved", vars: []corev1.EnvVar{{Name: "MEMCACHED_MAX_SIZE", ValueFrom: fromSecret}},
			want: firstRollout, unresolved: []string{"MEMCACHED_MAX_SIZE"}},
		// The value it has is the cluster's: overlayEnv cannot tell.
		{name: "a proxy variable from a Secret overrides the cluster's others", vars: []corev1.EnvVar{{Name: "HTTPS_PROXY", ValueFrom: fromSecret}},
			want: with(nil, "HTTP_PROXY", "NO_PROXY"), unset: []string{"HTTP_PROXY", "NO_PROXY"}},
		{name: "from a Secret, in the environment: left alone", vars: []corev1.EnvVar{{Name: "WATCH_NAMESPACE", ValueFrom: fromSecret}}, want: firstRollout},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			env := mapEnv(maps.Clone(firstRollout))
			set, unset, unresolved, err := overlayEnv(tc.vars, env)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(map[string]string(env)).To(Equal(tc.want))
			g.Expect(set).To(Equal(tc.set), "set")
			g.Expect(unset).To(Equal(tc.unset), "unset")
			g.Expect(unresolved).To(Equal(tc.unresolved), "unresolved")
		})
	}
}

// applySubscriptionEnv against a real API server with OLM's Subscription CRD: which
// Subscription configures which CSV.
func TestApplySubscriptionEnv(t *testing.T) {
	g := NewWithT(t)
	_, c := startAPIServer(t, g, crds.Subscription())
	ctx := context.Background()

	const ns = "default"
	subscribe := func(name string, status operatorsv1alpha1.SubscriptionStatus, config *operatorsv1alpha1.SubscriptionConfig) {
		s := &operatorsv1alpha1.Subscription{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: &operatorsv1alpha1.SubscriptionSpec{
				CatalogSource: "catalog", CatalogSourceNamespace: ns, Package: name, Channel: "stable", Config: config,
			},
		}
		g.Expect(c.Create(ctx, s)).To(Succeed())
		status.LastUpdated = metav1.Now()
		s.Status = status
		g.Expect(c.Status().Update(ctx, s)).To(Succeed())
	}
	// Mid-upgrade: v0.1.1 is being installed. OLM names it as installed as
	// soon as its CSV exists, while v0.1.0's pods still run and OLM rolls
	// v0.1.0's Deployment once more, without config.env.
	subscribe("memcached-operator", operatorsv1alpha1.SubscriptionStatus{
		CurrentCSV: "memcached-operator.v0.1.1", InstalledCSV: "memcached-operator.v0.1.1",
	}, &operatorsv1alpha1.SubscriptionConfig{Env: []corev1.EnvVar{
		{Name: "RELATED_IMAGE_MEMCACHED", Value: subImage}, {Name: "HTTP_PROXY", ValueFrom: fromSecret},
	}})
	// Another package in the same namespace; its configuration is never
	// this operator's.
	subscribe("other", operatorsv1alpha1.SubscriptionStatus{InstalledCSV: "other.v1.0.0"},
		&operatorsv1alpha1.SubscriptionConfig{Env: []corev1.EnvVar{{Name: "RELATED_IMAGE_MEMCACHED", Value: "other"}}})
	subscribe("unconfigured", operatorsv1alpha1.SubscriptionStatus{InstalledCSV: "unconfigured.v1.0.0"}, nil)

	for _, tc := range []struct {
		csv  string
		want subscriptionEnv
		env  map[string]string
	}{
		{csv: "memcached-operator.v0.1.1", env: map[string]string{"RELATED_IMAGE_MEMCACHED": subImage}, want: subscriptionEnv{
			subscription: "memcached-operator", set: []string{"RELATED_IMAGE_MEMCACHED"}, unresolved: []string{"HTTP_PROXY"},
		}},
		{csv: "memcached-operator.v0.1.0", env: map[string]string{"RELATED_IMAGE_MEMCACHED": subImage}, want: subscriptionEnv{
			subscription: "memcached-operator", set: []string{"RELATED_IMAGE_MEMCACHED"}, unresolved: []string{"HTTP_PROXY"},
		}},
		{csv: "unconfigured.v1.0.0", env: map[string]string{"RELATED_IMAGE_MEMCACHED": csvImage}, want: subscriptionEnv{subscription: "unconfigured"}},
		{csv: "hand-made.v1.0.0", env: map[string]string{"RELATED_IMAGE_MEMCACHED": csvImage}},
	} {
		env := mapEnv{"RELATED_IMAGE_MEMCACHED": csvImage}
		r, err := applySubscriptionEnv(ctx, c, ns, tc.csv, env)
		g.Expect(err).NotTo(HaveOccurred(), tc.csv)
		g.Expect(r).To(Equal(tc.want), tc.csv)
		g.Expect(map[string]string(env)).To(Equal(tc.env), tc.csv)
	}

	_, err := applySubscriptionEnv(ctx, c, "no-such-namespace", "x", mapEnv{})
	g.Expect(err).NotTo(HaveOccurred(), "an empty namespace has no Subscription for the CSV")
}
