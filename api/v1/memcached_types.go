package v1

import (
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
)

// MemcachedSpec is the desired state of a memcached cluster.
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
// +kubebuilder:printcolumn:name="Ready",type=integer,JSONPath=`.status.readyReplicas`
// +kubebuilder:printcolumn:name="Available",type=string,JSONPath=`.status.conditions[?(@.type=="Available")].status`
// +kubebuilder:printcolumn:name="Degraded",type=string,JSONPath=`.status.conditions[?(@.type=="Degraded")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,priority=1,JSONPath=`.status.conditions[?(@.type=="Degraded")].reason`
// +kubebuilder:printcolumn:name="Message",type=string,priority=1,JSONPath=`.status.conditions[?(@.type=="Degraded")].message`
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
