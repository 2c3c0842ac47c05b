package v1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Condition types reported in MemcachedStatus.Conditions.
const (
	// ConditionAvailable is True when every requested memcached pod is ready.
	ConditionAvailable = "Available"
	// ConditionProgressing is True while the Deployment rolls out or resizes.
	ConditionProgressing = "Progressing"
	// ConditionDegraded is True when the operator could not bring the
	// cluster's objects to the requested state; the message holds the error.
	ConditionDegraded = "Degraded"
	// ConditionCertificateExpiring is True while a pod serves a TLS
	// certificate with less than a quarter of its lifetime left, or past
	// its end; the message names the pod and the date. Set only on a
	// Memcached that serves TLS, once a pod has said what it serves.
	ConditionCertificateExpiring = "CertificateExpiring"
	// ConditionCertificateReady is True when the cert-manager Certificate
	// the operator keeps for spec.tls.issuerRef is issued; the message of a
	// False one is cert-manager's, or says that the cluster does not serve
	// cert-manager's API. Set only on a Memcached with an issuerRef.
	ConditionCertificateReady = "CertificateReady"
	// ConditionWarming is True while a rollout waits for a new pod to warm
	// up before it stops the next old one (see MemcachedRollout).
	ConditionWarming = "Warming"
)

// Reasons set on the conditions above. Each is a CamelCase word, as
// metav1.Condition requires, so clients can switch on it.
const (
	// ReasonAllReplicasReady: every requested pod is ready (Available=True).
	ReasonAllReplicasReady = "AllReplicasReady"
	// ReasonReplicasNotReady: fewer pods are ready than requested (Available=False).
	ReasonReplicasNotReady = "ReplicasNotReady"
	// ReasonRollingOut: the Deployment has not yet brought every pod to the
	// current template (Progressing=True).
	ReasonRollingOut = "RollingOut"
	// ReasonScaling: the number of pods differs from spec.size (Progressing=True).
	ReasonScaling = "Scaling"
	// ReasonRolloutComplete: the Deployment matches the spec (Progressing=False).
	ReasonRolloutComplete = "RolloutComplete"
	// ReasonReconcileFailed: a write to the API failed (Degraded=True).
	ReasonReconcileFailed = "ReconcileFailed"
	// ReasonReconciled: the last reconcile applied every object (Degraded=False).
	ReasonReconciled = "Reconciled"
	// ReasonNameInUse: a Deployment, Service or PodDisruptionBudget of the
	// Memcached's name exists and belongs to something else; the operator
	// leaves it alone and creates nothing (Degraded=True).
	ReasonNameInUse = "NameInUse"
	// ReasonSizeOutOfPolicy: spec.size is outside the administrator's size
	// policy, which happens only when the webhooks did not run; the operator
	// leaves the objects as they are (Degraded=True).
	ReasonSizeOutOfPolicy = "SizeOutOfPolicy"
	// ReasonTLSSecretInvalid: a new pod's check of spec.tls's Secret failed
	// (missing, no certificate, a key that does not match, expired); the
	// message names the Secret and the problem. Pods that serve keep
	// serving, and the rollout waits (Degraded=True).
	ReasonTLSSecretInvalid = "TLSSecretInvalid"
	// ReasonCertificateNearExpiry: a pod serves a certificate with less
	// than a quarter of its lifetime left (CertificateExpiring=True).
	ReasonCertificateNearExpiry = "CertificateNearExpiry"
	// ReasonCertificateExpired: a pod serves a certificate past its end
	// (CertificateExpiring=True).
	ReasonCertificateExpired = "CertificateExpired"
	// ReasonCertificatesValid: every pod that answered serves a certificate
	// with more than a quarter of its lifetime left (CertificateExpiring=False).
	ReasonCertificatesValid = "CertificatesValid"
	// ReasonCertificateIssued: cert-manager reports the Certificate Ready
	// (CertificateReady=True).
	ReasonCertificateIssued = "CertificateIssued"
	// ReasonCertificatePending: cert-manager has not issued the Certificate,
	// or it has not yet said so (CertificateReady=False).
	ReasonCertificatePending = "CertificatePending"
	// ReasonCertManagerNotServed: the cluster did not serve cert-manager's
	// Certificate API when the operator started (CertificateReady=False).
	ReasonCertManagerNotServed = "CertManagerNotServed"
	// ReasonWaitingForWarmth: a rollout waits for the pod the message
	// names to warm up (Warming=True).
	ReasonWaitingForWarmth = "WaitingForWarmth"
	// ReasonNoPodWarming: no rollout waits for a pod (Warming=False).
	ReasonNoPodWarming = "NoPodWarming"
)

// MemcachedSpec is the desired state of a memcached cluster.
//
// The rules below are memcached's own start-up checks (see
// controllers/operand), kept in the schema so that they hold where the
// webhooks do not run; the webhooks check the same with the administrator's
// size policy and the pod spec's rules on top.
//
// Rules across fields are here; a rule of one field is on the field. (The
// field path of a rule is not given: the operator-sdk that writes the CSV
// does not know the marker's fieldPath argument; the messages name the
// fields instead.) A rule across fields holds only once each field meets its
// own rule, so that a bad field is reported once, on itself, and not again
// through a field the user left to its default.
//
// +kubebuilder:validation:XValidation:rule="!has(self.memory) || !has(self.maxItemSize) || !(quantity(string(self.memory)).isInteger() && quantity(string(self.memory)).asInteger() >= 1048576 && quantity(string(self.memory)).asInteger() % 1048576 == 0) || !(quantity(string(self.maxItemSize)).isInteger() && quantity(string(self.maxItemSize)).asInteger() >= 524288 && quantity(string(self.maxItemSize)).asInteger() <= 1073741824 && quantity(string(self.maxItemSize)).asInteger() % 524288 == 0) || quantity(string(self.maxItemSize)).asApproximateFloat() * 2.0 <= quantity(string(self.memory)).asApproximateFloat()",message="spec.maxItemSize must be at most half of spec.memory: memcached refuses a larger item size"
// +kubebuilder:validation:XValidation:rule="!has(self.maxConnections) || !has(self.threads) || self.threads < 1 || self.threads > 256 || self.maxConnections >= 5 * self.threads + 16",message="spec.maxConnections must be at least 5 per thread plus 16: memcached counts 5 file descriptors per thread against it"
type MemcachedSpec struct {
	// Size is the number of memcached pods: 1 to 16, and 3 when omitted,
	// unless the cluster administrator set another range or default (the
	// operator's --min-size, --max-size and --default-size). An omitted size
	// is filled in when the object is written, as Kubernetes defaults a
	// Deployment's replicas: removing size from a manifest and applying it
	// again sets the default size, whatever the size was.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Size",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:podCount"}
	Size *int32 `json:"size,omitempty"`

	// Memory is the memory each pod stores items in (memcached's
	// --memory-limit), a whole number of MiB, at least twice maxItemSize.
	// 64Mi when omitted. The container needs more than this for connections
	// and the hash table; see resources.
	// +optional
	// +kubebuilder:default="64Mi"
	// +kubebuilder:validation:XValidation:rule="quantity(string(self)).isInteger() && quantity(string(self)).asInteger() >= 1048576 && quantity(string(self)).asInteger() % 1048576 == 0",message="must be a whole number of MiB, at least 1Mi, such as 64Mi or 2Gi: memcached takes its memory in MiB"
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Memory for Items",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:text"}
	Memory *resource.Quantity `json:"memory,omitempty"`

	// MaxItemSize is the largest item memcached stores (its --max-item-size):
	// a multiple of 512Ki from 512Ki to 1Gi, and at most half of memory.
	// 1Mi when omitted. In a quantity "m" means one thousandth: one
	// mebibyte is 1Mi.
	// +optional
	// +kubebuilder:default="1Mi"
	// +kubebuilder:validation:XValidation:rule="quantity(string(self)).isInteger() && quantity(string(self)).asInteger() >= 524288 && quantity(string(self)).asInteger() <= 1073741824 && quantity(string(self)).asInteger() % 524288 == 0",message="must be a multiple of 512Ki from 512Ki to 1Gi, such as 1Mi or 4Mi: memcached refuses other item sizes"
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Maximum Item Size",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:text"}
	MaxItemSize *resource.Quantity `json:"maxItemSize,omitempty"`

	// MaxConnections is the number of file descriptors, mostly client
	// connections, each pod may hold (memcached's --conn-limit): at least 5
	// per thread plus 16, as memcached counts 5 per worker thread against it.
	// 1024 when omitted. memcached sets its open-file limit to this number
	// at start and exits if the node's limit for containers is lower; the
	// maximum is the Linux default for any process.
	// +optional
	// +kubebuilder:default=1024
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1048576
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Maximum Connections",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:number"}
	MaxConnections *int32 `json:"maxConnections,omitempty"`

	// Threads is the number of worker threads of each pod (memcached's
	// --threads). 4 when omitted. memcached advises no more than the node's
	// cores, and warns above 64; 256 is the most admitted, a bound on the
	// CPU a Memcached without stored resources gets (125m per thread).
	// +optional
	// +kubebuilder:default=4
	// +kubebuilder:validation:XValidation:rule="self >= 1 && self <= 256",message="must be from 1 to 256, such as 4: memcached needs at least one worker thread, and advises no more than the node's cores"
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Threads",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:number"}
	Threads *int32 `json:"threads,omitempty"`

	// Resources are the memcached container's CPU and memory. When omitted
	// they are derived from memory, maxConnections and threads, and follow
	// them when they change; a memory limit must hold memory plus what
	// memcached needs beside its items, or the kernel kills memcached once
	// the cache fills.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Resources",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:resourceRequirements"}
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`

	// NodeSelector restricts the pods to nodes with these labels.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Node Selector",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:advanced"}
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`

	// Tolerations let the pods run on nodes with matching taints.
	// +optional
	// +listType=atomic
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Tolerations",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:advanced"}
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`

	// Affinity holds the pods' node and pod affinity rules.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Affinity",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:advanced"}
	Affinity *corev1.Affinity `json:"affinity,omitempty"`

	// TopologySpreadConstraints spread the pods across topology domains.
	// When no placement is given (this, nodeSelector, tolerations, affinity
	// and priorityClassName all omitted) the pods are spread softly across
	// nodes and zones, and that spread is written here.
	// +optional
	// +listType=atomic
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Topology Spread Constraints",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:advanced"}
	TopologySpreadConstraints []corev1.TopologySpreadConstraint `json:"topologySpreadConstraints,omitempty"`

	// PriorityClassName is the pods' PriorityClass.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Priority Class",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:advanced"}
	PriorityClassName string `json:"priorityClassName,omitempty"`

	// TLS makes memcached serve its clients over TLS only. When omitted,
	// memcached serves plain text. Turning it on or off replaces the pods
	// one at a time; a renewed certificate does not: every pod serves it
	// seconds after the kubelet's next sync of the pod (within two minutes
	// of the Secret's change with the kubelet's default one-minute sync),
	// keeping its items and its open connections.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="TLS",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:advanced"}
	TLS *MemcachedTLS `json:"tls,omitempty"`

	// Monitoring runs a metrics exporter beside memcached in every pod and,
	// where the Prometheus Operator's API is served, a PodMonitor and a
	// PrometheusRule of alerts for this Memcached. A new Memcached has it on;
	// one created before the operator offered it keeps it off until it is
	// turned on here. Turning it on or off replaces the pods one at a time.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Monitoring"
	Monitoring *MemcachedMonitoring `json:"monitoring,omitempty"`

	// Rollout paces the replacement of pods by the cache's warmth: each pod
	// a rollout starts must be warm before the next old pod stops. When
	// omitted, pacing is on with the defaults below.
	// +optional
	// +kubebuilder:default={}
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Rollout",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:advanced"}
	Rollout *MemcachedRollout `json:"rollout,omitempty"`
}

// Rollout pacings: what a rollout waits for before it stops the next old
// pod.
const (
	// RolloutPacingWarmth: the new pod is ready once it is warm (see
	// MemcachedRollout) or its warm-up timeout has passed.
	RolloutPacingWarmth = "Warmth"
	// RolloutPacingNone: the new pod is ready once memcached answers.
	RolloutPacingNone = "None"
)

// MemcachedRollout says when a pod that a rollout started is warm enough
// for the rollout to stop the next old pod. The new pod is in clients'
// server list from its start; it is warm once it holds itemsPercent of the
// items of its peers' median, or once its hit ratio is within
// hitRatioPoints of its peers', whichever comes first, and in any case
// after warmupTimeout. Only a rollout waits: a new pod while no pod of an
// older template runs (a first start, a scale up, the replacement of a
// deleted pod) is ready once memcached answers.
type MemcachedRollout struct {
	// Pacing is Warmth (the default) or None.
	// +optional
	// +kubebuilder:default=Warmth
	// +kubebuilder:validation:Enum=Warmth;None
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Pacing"
	Pacing string `json:"pacing,omitempty"`

	// ItemsPercent: a new pod is warm once it holds this percentage of the
	// items of its peers' median pod; 50 when omitted.
	// +optional
	// +kubebuilder:default=50
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Items Percent",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:number"}
	ItemsPercent *int32 `json:"itemsPercent,omitempty"`

	// HitRatioPoints: a new pod is warm once its hit ratio is at most this
	// many percentage points below its peers', both measured over the
	// same few seconds; 5 when omitted.
	// +optional
	// +kubebuilder:default=5
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Hit Ratio Points",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:number"}
	HitRatioPoints *int32 `json:"hitRatioPoints,omitempty"`

	// WarmupTimeout is the longest a rollout waits for one new pod, from
	// the moment its containers are ready; 10m when omitted, at most 24h.
	// +optional
	// +kubebuilder:default="10m"
	// +kubebuilder:validation:XValidation:rule="duration(self) > duration('0s') && duration(self) <= duration('24h')",message="spec.rollout.warmupTimeout must be more than 0s and at most 24h"
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Warm-up Timeout"
	WarmupTimeout *metav1.Duration `json:"warmupTimeout,omitempty"`
}

// TLS issuers: who writes the Secret a Memcached's TLS names.
const (
	// TLSIssuerExternal: the Secret is written by someone else, by hand or
	// by cert-manager's Certificate.
	TLSIssuerExternal = "External"
	// TLSIssuerOpenShiftServiceCA: the operator asks OpenShift's service CA
	// to write the Secret for the Memcached's Service.
	TLSIssuerOpenShiftServiceCA = "OpenShiftServiceCA"
)

// Client certificate policies of a Memcached's TLS.
const (
	// ClientCertificatesNone: any client may connect over TLS.
	ClientCertificatesNone = "None"
	// ClientCertificatesRequired: a client must present a certificate
	// signed by the Secret's ca.crt.
	ClientCertificatesRequired = "Required"
)

// MemcachedMonitoring is whether a Memcached's pods export metrics.
type MemcachedMonitoring struct {
	// Enabled runs prometheus/memcached_exporter as the container
	// "exporter" in every pod, serving memcached's statistics on port 9150
	// (named "metrics"), with the PodMonitor and PrometheusRule where the
	// Prometheus Operator's API is served.
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Enabled",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:booleanSwitch"}
	Enabled bool `json:"enabled"`
}

// IsEnabled reports whether m turns monitoring on; nil is off.
func (m *MemcachedMonitoring) IsEnabled() bool { return m != nil && m.Enabled }

// MemcachedTLS is how memcached serves TLS.
//
// +kubebuilder:validation:XValidation:rule="!has(self.issuer) || self.issuer != 'OpenShiftServiceCA' || !has(self.clientCertificates) || self.clientCertificates != 'Required'",message="spec.tls.clientCertificates: Required needs the Secret's ca.crt, which OpenShift's service CA does not write: use an External Secret"
// +kubebuilder:validation:XValidation:rule="!has(self.issuerRef) || !has(self.issuer) || self.issuer == 'External'",message="spec.tls.issuerRef: OpenShift's service CA writes the Secret of issuer OpenShiftServiceCA; remove issuerRef, or set issuer External to have cert-manager write it"
type MemcachedTLS struct {
	// SecretName is the Secret, in the Memcached's namespace, holding the
	// server's certificate chain and key as tls.crt and tls.key, and the CA
	// of client certificates as ca.crt when they are required: a Secret of
	// type kubernetes.io/tls, as cert-manager and OpenShift's service CA
	// write it. A missing or unusable Secret is reported in the Degraded
	// condition, and pods that still serve keep serving.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')",message="must be a Secret's name: lower-case letters, digits, '-' and '.', starting and ending with a letter or digit"
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="TLS Secret",xDescriptors={"urn:alm:descriptor:io.kubernetes:Secret","urn:alm:descriptor:com.tectonic.ui:advanced"}
	SecretName string `json:"secretName"`

	// Issuer is who writes the Secret: External (the default) when you or
	// cert-manager do (see issuerRef), OpenShiftServiceCA to have OpenShift's service CA
	// issue it for the Memcached's Service, whose clients then trust the
	// CA in the openshift-service-ca.crt ConfigMap of every namespace.
	// +optional
	// +kubebuilder:default=External
	// +kubebuilder:validation:Enum=External;OpenShiftServiceCA
	Issuer string `json:"issuer,omitempty"`

	// ClientCertificates is None (the default) to let any client connect,
	// or Required to admit only clients whose certificate the Secret's
	// ca.crt signs.
	// +optional
	// +kubebuilder:default=None
	// +kubebuilder:validation:Enum=None;Required
	ClientCertificates string `json:"clientCertificates,omitempty"`

	// IssuerRef names a cert-manager Issuer or ClusterIssuer: the operator
	// then keeps a cert-manager Certificate of the Memcached's name, owned
	// by it, that writes secretName with every name a client verifies (the
	// Service's and each pod's record under it, with and without the
	// cluster domain). cert-manager renews it, and the pods serve the
	// renewal without a restart. Removing issuerRef deletes the Certificate
	// and leaves the Secret. Where the cluster does not serve cert-manager's
	// API, the CertificateReady condition says so.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Certificate Issuer",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:advanced"}
	IssuerRef *TLSIssuerReference `json:"issuerRef,omitempty"`

	// MinVersion is the oldest TLS version memcached accepts: VersionTLS12
	// or VersionTLS13. When omitted it follows the cluster: on OpenShift,
	// the minimum and ciphers of the APIServer's tlsSecurityProfile
	// (Intermediate when it sets none); elsewhere TLS 1.2 with the
	// Intermediate profile's ciphers.
	// +optional
	// +kubebuilder:validation:Enum=VersionTLS12;VersionTLS13
	MinVersion string `json:"minVersion,omitempty"`
}

// TLSIssuerReference names the cert-manager issuer of a Memcached's
// certificate, as a Certificate's spec.issuerRef does.
//
// +kubebuilder:validation:XValidation:rule="!has(self.group) || self.group != 'cert-manager.io' || !has(self.kind) || self.kind in ['Issuer', 'ClusterIssuer']",message="spec.tls.issuerRef.kind: cert-manager.io's issuers are Issuer and ClusterIssuer"
type TLSIssuerReference struct {
	// Name is the issuer's name; an Issuer is in the Memcached's namespace.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// Kind is Issuer (the default), in the Memcached's namespace, or
	// ClusterIssuer; an external issuer's group may name its own kinds.
	// +optional
	// +kubebuilder:default=Issuer
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[A-Z][A-Za-z0-9]*$`
	Kind string `json:"kind,omitempty"`

	// Group is the issuer's API group: cert-manager.io (the default), or
	// an external issuer's.
	// +optional
	// +kubebuilder:default=cert-manager.io
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Group string `json:"group,omitempty"`
}

// MemcachedStatus is the observed state of a memcached cluster.
type MemcachedStatus struct {
	// Nodes are the names of the memcached pods, sorted.
	// +optional
	// +listType=atomic
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Nodes"
	Nodes []string `json:"nodes,omitempty"`

	// ReadyReplicas is the number of memcached pods that are ready.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Ready Replicas"
	ReadyReplicas int32 `json:"readyReplicas,omitempty"`

	// Selector is the label selector of the memcached pods, in string form,
	// for the scale subresource (kubectl scale, autoscalers).
	// +optional
	Selector string `json:"selector,omitempty"`

	// Endpoint is where clients connect: the headless Service's name in
	// the cluster's DNS and memcached's port, such as cache.shop.svc:11211.
	// The name resolves to the address of every ready pod; memcached
	// clients spread keys across all of them. With spec.tls the port
	// serves TLS only, and the certificate names this host.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Endpoint"
	Endpoint string `json:"endpoint,omitempty"`

	// ObservedGeneration is the metadata.generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions are Available, Progressing and Degraded.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +patchStrategy=merge
	// +patchMergeKey=type
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Conditions",xDescriptors={"urn:alm:descriptor:io.kubernetes.conditions"}
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`
}

// Memcached is a memcached cluster: a Deployment of memcached pods, a
// headless Service that lists them, and a PodDisruptionBudget when there are
// two or more.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.size,statuspath=.status.readyReplicas,selectorpath=.status.selector
// +kubebuilder:resource:shortName=mc
// +kubebuilder:printcolumn:name="Size",type=integer,JSONPath=`.spec.size`
// +kubebuilder:printcolumn:name="Memory",type=string,JSONPath=`.spec.memory`
// +kubebuilder:printcolumn:name="Ready",type=integer,JSONPath=`.status.readyReplicas`
// +kubebuilder:printcolumn:name="Available",type=string,JSONPath=`.status.conditions[?(@.type=="Available")].status`
// +kubebuilder:printcolumn:name="Degraded",type=string,JSONPath=`.status.conditions[?(@.type=="Degraded")].status`
// +kubebuilder:printcolumn:name="Endpoint",type=string,priority=1,JSONPath=`.status.endpoint`
// +kubebuilder:printcolumn:name="Reason",type=string,priority=1,JSONPath=`.status.conditions[?(@.type=="Degraded")].reason`
// +kubebuilder:printcolumn:name="Message",type=string,priority=1,JSONPath=`.status.conditions[?(@.type=="Degraded")].message`
// +kubebuilder:printcolumn:name="Warming",type=string,priority=1,JSONPath=`.status.conditions[?(@.type=="Warming")].message`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +operator-sdk:csv:customresourcedefinitions:displayName="Memcached",resources={{Deployment,v1,""},{Service,v1,""},{PodDisruptionBudget,v1,""}}
type Memcached struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec may be omitted, or empty: every field has a default.
	// +optional
	Spec MemcachedSpec `json:"spec"`

	// +optional
	Status MemcachedStatus `json:"status,omitempty"`
}

// MemcachedList is a list of Memcached.
//
// +kubebuilder:object:root=true
type MemcachedList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Memcached `json:"items"`
}
