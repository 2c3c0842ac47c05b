package controllers

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
	"github.com/example-inc/memcached-operator/controllers/servedcert"
)

// withServedCertificates sets st's CertificateExpiring condition from what
// mc's pods said they serve (known false: nothing yet, which leaves the
// condition as it was). A Memcached without TLS has none. The messages hold
// the pod and the date, never a time left, so that a status is written only
// when what the pods serve changes.
func withServedCertificates(mc *cachev1.Memcached, st cachev1.MemcachedStatus, r servedcert.Report, known bool) cachev1.MemcachedStatus {
	if mc.Spec.TLS == nil {
		meta.RemoveStatusCondition(&st.Conditions, cachev1.ConditionCertificateExpiring)
		return st
	}
	if !known {
		return st
	}
	c := metav1.Condition{Type: cachev1.ConditionCertificateExpiring, Status: metav1.ConditionFalse,
		Reason:             cachev1.ReasonCertificatesValid,
		Message:            "every pod that answered serves a certificate with more than a quarter of its lifetime left",
		ObservedGeneration: mc.Generation}
	if len(r.Expiring) > 0 {
		first := r.Expiring[0]
		c.Status, c.Reason = metav1.ConditionTrue, cachev1.ReasonCertificateNearExpiry
		state := "ends"
		if first.Expired {
			c.Reason, state = cachev1.ReasonCertificateExpired, "ended"
		}
		c.Message = fmt.Sprintf("pod %s serves a certificate that %s at %s", first.Pod, state, first.NotAfter.UTC().Format(time.RFC3339))
		if more := len(r.Expiring) - 1; more > 0 {
			c.Message += fmt.Sprintf(", and %d more %s", more, map[bool]string{true: "pod does", false: "pods do"}[more == 1])
		}
		c.Message += fmt.Sprintf(": renew the certificate in Secret %q; the pods load it without a restart", mc.Spec.TLS.SecretName)
	}
	meta.SetStatusCondition(&st.Conditions, c)
	return st
}
