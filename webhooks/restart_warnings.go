package webhooks

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
	"github.com/example-inc/memcached-operator/controllers/operand"
)

// restartWarnings says which of an update's changes replace the pods, and
// that their caches start empty: memcached reads its settings only when it
// starts, and the pods' resources and placement are part of the Deployment's
// pod template. Nothing is said when only the size changes.
func restartWarnings(old, spec *cachev1.MemcachedSpec) []string {
	was, is := operand.FromSpec(old), operand.FromSpec(spec)
	var changes []string
	change := func(field, from, to string) {
		if from != to {
			changes = append(changes, fmt.Sprintf("spec.%s (%s to %s)", field, from, to))
		}
	}
	change("memory", bytesString(was.MemoryMiB*1024*1024), bytesString(is.MemoryMiB*1024*1024))
	change("maxItemSize", bytesString(was.MaxItemSize), bytesString(is.MaxItemSize))
	change("maxConnections", fmt.Sprint(was.MaxConnections), fmt.Sprint(is.MaxConnections))
	change("threads", fmt.Sprint(was.Threads), fmt.Sprint(is.Threads))
	// Resources derived from the settings follow them: the settings' change
	// already says why they change.
	if !equality.Semantic.DeepEqual(operand.ContainerResources(old), operand.ContainerResources(spec)) &&
		(!hasDerivedResources(old) || !hasDerivedResources(spec)) {
		changes = append(changes, "spec.resources")
	}
	if !equality.Semantic.DeepEqual(placement(old), placement(spec)) {
		changes = append(changes, "the pods' placement")
	}
	changes = append(changes, tlsChanges(old.TLS, spec.TLS)...)
	if was, is := old.Monitoring.IsEnabled(), spec.Monitoring.IsEnabled(); was != is {
		// The exporter is a container of the pod.
		changes = append(changes, fmt.Sprintf("spec.monitoring.enabled (%t to %t)", was, is))
	}
	if len(changes) == 0 {
		return nil
	}
	return []string{"changing " + strings.Join(changes, ", ") + " replaces every memcached pod, one at a time, " +
		"and each new pod starts with an empty cache"}
}

func bytesString(n int64) string { return resource.NewQuantity(n, resource.BinarySI).String() }

func placement(spec *cachev1.MemcachedSpec) cachev1.MemcachedSpec {
	return cachev1.MemcachedSpec{
		NodeSelector:              spec.NodeSelector,
		Tolerations:               spec.Tolerations,
		Affinity:                  spec.Affinity,
		TopologySpreadConstraints: spec.TopologySpreadConstraints,
		PriorityClassName:         spec.PriorityClassName,
	}
}

// tlsChanges are the changes of spec.tls that reach the pods: all but the
// issuer, which only annotates the Service. A renewed certificate changes
// no spec and restarts nothing.
func tlsChanges(old, tls *cachev1.MemcachedTLS) []string {
	switch {
	case old == nil && tls == nil:
		return nil
	case old == nil:
		return []string{"spec.tls (off to on)"}
	case tls == nil:
		return []string{"spec.tls (on to off)"}
	}
	var changes []string
	change := func(field, from, to string) {
		if from != to {
			changes = append(changes, fmt.Sprintf("spec.tls.%s (%s to %s)", field, from, to))
		}
	}
	change("secretName", old.SecretName, tls.SecretName)
	change("clientCertificates", orDefault(old.ClientCertificates, cachev1.ClientCertificatesNone),
		orDefault(tls.ClientCertificates, cachev1.ClientCertificatesNone))
	change("minVersion", orDefault(old.MinVersion, "the cluster's"), orDefault(tls.MinVersion, "the cluster's"))
	return changes
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}
