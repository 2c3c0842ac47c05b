package controllers

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
	"github.com/example-inc/memcached-operator/controllers/operand"
)

// serviceCASecretAnnotation asks OpenShift's service CA operator to write a
// serving certificate for the Service into the Secret it names; for a
// headless Service the certificate also covers *.<service>.<namespace>.svc,
// the pods' names.
const serviceCASecretAnnotation = "service.beta.openshift.io/serving-cert-secret-name"

// desiredService is a headless Service: memcached clients shard keys across
// servers themselves, so they need every pod's address (one DNS A record
// each), not a load-balanced virtual IP.
//
// It publishes every pod that has an address, ready or not. A client's
// server list is its key-to-server map: dropping a pod whose probe failed
// for a moment (a slow answer, a restarted sidecar) re-shards every client
// around it and back, moving far more keys than the one pod holds, whereas
// a pod kept in the list costs only the misses of requests it cannot
// answer. So the list changes only when a pod is created (it appears with
// its address, before memcached listens) or removed (it leaves once the pod
// is gone, not when it starts terminating). Readiness still gates what
// readiness is for: the Deployment's rollout, the PDB and status.
func desiredService(mc *cachev1.Memcached) *corev1ac.ServiceApplyConfiguration {
	svc := corev1ac.Service(mc.Name, mc.Namespace).
		WithLabels(objectLabels(mc)).
		WithOwnerReferences(ownerReference(mc)).
		WithSpec(corev1ac.ServiceSpec().
			WithClusterIP(corev1.ClusterIPNone).
			WithPublishNotReadyAddresses(true).
			WithSelector(selectorLabels(mc)).
			WithPorts(corev1ac.ServicePort().
				WithName(portName).
				WithPort(operand.Port).
				WithTargetPort(intstr.FromString(portName)).
				WithProtocol(corev1.ProtocolTCP)))
	if tls := mc.Spec.TLS; tls != nil && tls.Issuer == cachev1.TLSIssuerOpenShiftServiceCA {
		svc.WithAnnotations(map[string]string{serviceCASecretAnnotation: tls.SecretName})
	}
	return svc.WithAnnotations(desiredHash(svc))
}
