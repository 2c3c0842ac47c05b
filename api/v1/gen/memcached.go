package gen

import (
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
)

// MemcachedOption changes a Memcached built by Memcached.
type MemcachedOption func(*cachev1.Memcached)

// Memcached returns a Memcached named name in namespace ns, with its type
// set (so it can be sent as JSON) and nothing in its spec unless opts say so.
func Memcached(ns, name string, opts ...MemcachedOption) *cachev1.Memcached {
	mc := &cachev1.Memcached{
		TypeMeta:   metav1.TypeMeta{APIVersion: cachev1.GroupVersion.String(), Kind: "Memcached"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
	}
	for _, o := range opts {
		o(mc)
	}
	return mc
}

// WithSize sets spec.size.
func WithSize(n int32) MemcachedOption {
	return func(mc *cachev1.Memcached) { mc.Spec.Size = ptr.To(n) }
}

// WithLabels adds labels, given as key, value, key, value...
func WithLabels(kv ...string) MemcachedOption {
	return func(mc *cachev1.Memcached) {
		if mc.Labels == nil {
			mc.Labels = map[string]string{}
		}
		for i := 0; i+1 < len(kv); i += 2 {
			mc.Labels[kv[i]] = kv[i+1]
		}
	}
}

// WithUID sets the UID, as the API server would, for objects that never
// reach one.
func WithUID(uid types.UID) MemcachedOption {
	return func(mc *cachev1.Memcached) { mc.UID = uid }
}

// WithGeneration sets metadata.generation, as the API server would.
func WithGeneration(g int64) MemcachedOption {
	return func(mc *cachev1.Memcached) { mc.Generation = g }
}

// WithReadyReplicas sets status.readyReplicas.
func WithReadyReplicas(n int32) MemcachedOption {
	return func(mc *cachev1.Memcached) { mc.Status.ReadyReplicas = n }
}

// WithMemory sets spec.memory, a quantity such as "256Mi".
func WithMemory(q string) MemcachedOption {
	return func(mc *cachev1.Memcached) { mc.Spec.Memory = ptr.To(resource.MustParse(q)) }
}

// WithMaxItemSize sets spec.maxItemSize, a quantity such as "4Mi".
func WithMaxItemSize(q string) MemcachedOption {
	return func(mc *cachev1.Memcached) { mc.Spec.MaxItemSize = ptr.To(resource.MustParse(q)) }
}

// WithMaxConnections sets spec.maxConnections.
func WithMaxConnections(n int32) MemcachedOption {
	return func(mc *cachev1.Memcached) { mc.Spec.MaxConnections = ptr.To(n) }
}

// WithThreads sets spec.threads.
func WithThreads(n int32) MemcachedOption {
	return func(mc *cachev1.Memcached) { mc.Spec.Threads = ptr.To(n) }
}

// WithTLS serves TLS from the Secret secretName, with the API's defaults
// for the rest, as the API server stores them.
func WithTLS(secretName string) MemcachedOption {
	return func(mc *cachev1.Memcached) {
		mc.Spec.TLS = &cachev1.MemcachedTLS{SecretName: secretName,
			Issuer: cachev1.TLSIssuerExternal, ClientCertificates: cachev1.ClientCertificatesNone}
	}
}

// WithIssuer has cert-manager's Issuer (kind Issuer) or ClusterIssuer
// (kind ClusterIssuer) of the name issue the TLS Secret; it follows WithTLS.
func WithIssuer(kind, name string) MemcachedOption {
	return func(mc *cachev1.Memcached) {
		mc.Spec.TLS.IssuerRef = &cachev1.TLSIssuerReference{Name: name, Kind: kind, Group: "cert-manager.io"}
	}
}

// WithMonitoring sets spec.monitoring.enabled.
func WithMonitoring(enabled bool) MemcachedOption {
	return func(mc *cachev1.Memcached) { mc.Spec.Monitoring = &cachev1.MemcachedMonitoring{Enabled: enabled} }
}

// WithRollout sets spec.rollout.
func WithRollout(r cachev1.MemcachedRollout) MemcachedOption {
	return func(mc *cachev1.Memcached) { mc.Spec.Rollout = &r }
}
