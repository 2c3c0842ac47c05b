package controllers

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/example-inc/memcached-operator/certs/tlsprofile"
	"github.com/example-inc/memcached-operator/controllers/servedcert"
)

// DefaultMemcachedImage is the operand image when RELATED_IMAGE_MEMCACHED is
// unset: the official memcached image (on Debian) of the upstream release
// every proof runs, Debian trixie's package of it (make memcached).
const DefaultMemcachedImage = "docker.io/library/memcached:1.6.38"

// DefaultTLSReloaderImage is the TLS sidecar's image when
// RELATED_IMAGE_TLS_RELOADER is unset. Its version moves only when the
// sidecar changes, so that an operator upgrade leaves TLS pods alone.
const DefaultTLSReloaderImage = "example.com/memcached-operator-tls-reloader:v0.1.0"

// DefaultExporterImage is the metrics exporter's image when
// RELATED_IMAGE_MEMCACHED_EXPORTER is unset: prometheus/memcached_exporter
// as its project publishes it.
const DefaultExporterImage = "quay.io/prometheus/memcached-exporter:v0.16.0"

// Options configure what the reconciler builds. Package main fills them
// from flags and the operator's environment once, so tests can run
// reconcilers with different options side by side.
type Options struct {
	// Image is the memcached image of every Deployment.
	Image string

	// TLSReloaderImage runs beside memcached in pods that serve TLS: it
	// checks the Secret's files before memcached starts and has memcached
	// reload them when the Secret changes.
	TLSReloaderImage string

	// ExporterImage runs beside memcached in the pods of a monitored
	// Memcached (spec.monitoring) and exports memcached's statistics.
	ExporterImage string

	// PrometheusOperator says the cluster serves the Prometheus Operator's
	// API (monitoring.coreos.com/v1): each monitored Memcached then gets a
	// PodMonitor and a PrometheusRule.
	PrometheusOperator bool

	// CertManager says the cluster serves cert-manager's Certificate API
	// (cert-manager.io/v1): a Memcached with spec.tls.issuerRef then gets a
	// Certificate that writes its Secret.
	CertManager bool

	// TLSProfile is the cluster's TLS security profile, which memcached
	// follows where a Memcached sets no minimum version. The reconciler
	// reads it when ClusterTLSProfile is set; Intermediate otherwise.
	TLSProfile tlsprofile.Profile

	// ClusterTLSProfile says the cluster serves OpenShift's APIServer API,
	// whose object holds the profile: the reconciler watches it.
	ClusterTLSProfile bool

	// ProxyEnv are the proxy variables every memcached container carries
	// (see package proxyenv). Empty means the cluster has no proxy.
	ProxyEnv []corev1.EnvVar

	// DefaultSize is the size used when a Memcached has none, which happens
	// only when the defaulting webhook did not run.
	DefaultSize int32

	// MinSize and MaxSize are the size policy's range (zero: no bound). The
	// validating webhook holds new sizes to it; the reconciler leaves alone
	// a Memcached outside it, which only gets in while the webhooks are off.
	MinSize, MaxSize int32

	// Platform selects the pod security context that the cluster admits.
	Platform Platform

	// Workers is how many Memcached objects are reconciled at once.
	Workers int

	// CoalesceDelay is how long changes of a Deployment and its pods are
	// gathered before their Memcached is reconciled. Defaults to one second.
	CoalesceDelay time.Duration

	// ProgressInterval is how often, at most, a rollout's progress is
	// written to status; its end and failures are written at once.
	// Defaults to ten seconds.
	ProgressInterval time.Duration

	// ServedCertificates, when set, tells which pods serve a certificate
	// near its end (package servedcert): the reconciler reports it in the
	// CertificateExpiring condition. It must run in the same manager.
	ServedCertificates *servedcert.Watcher

	// Metrics is where the reconciler reports which Memcached are blocked;
	// cmd/manager/app registers it for /metrics. Defaults to a Metrics of the
	// reconciler's own, which nothing collects.
	Metrics *Metrics

	// Warmup, when set, has a rollout wait for each new pod to warm up
	// (see paceRollout), judged from its memcached's counters against its
	// peers'. When nil, nothing asks a pod anything: a pod is ready as soon
	// as memcached answers, as for tests whose pods are not real.
	Warmup *WarmupOptions
}

// WarmupOptions say how often, and where, the operator reads a warming
// pod's counters.
type WarmupOptions struct {
	// Interval is the window over which hit ratios are compared, and how
	// often a waiting rollout is looked at again.
	Interval time.Duration
	// Port is memcached's port on each pod's IP; operand.Port when 0.
	// Tests serve real memcached on loopback addresses in the pods' stead.
	Port int
}

// withDefaults returns o with the zero values filled in.
func (o Options) withDefaults() Options {
	if o.Image == "" {
		o.Image = DefaultMemcachedImage
	}
	if o.TLSReloaderImage == "" {
		o.TLSReloaderImage = DefaultTLSReloaderImage
	}
	if o.ExporterImage == "" {
		o.ExporterImage = DefaultExporterImage
	}
	if o.TLSProfile.MinVersion == "" {
		o.TLSProfile = tlsprofile.Intermediate()
	}
	if o.DefaultSize == 0 {
		o.DefaultSize = 1
	}
	if o.Workers == 0 {
		o.Workers = 1
	}
	if o.CoalesceDelay == 0 {
		o.CoalesceDelay = defaultCoalesceDelay
	}
	if o.ProgressInterval == 0 {
		o.ProgressInterval = defaultProgressInterval
	}
	if o.Metrics == nil {
		o.Metrics = NewMetrics()
	}
	return o
}
