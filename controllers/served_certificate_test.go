package controllers

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
	"github.com/example-inc/memcached-operator/api/v1/gen"
	"github.com/example-inc/memcached-operator/controllers/servedcert"
)

func TestWithServedCertificates(t *testing.T) {
	end := time.Date(2026, 12, 4, 16, 0, 0, 0, time.UTC)
	earlier := metav1.Condition{Type: cachev1.ConditionCertificateExpiring, Status: metav1.ConditionFalse,
		Reason: cachev1.ReasonCertificatesValid, Message: "as before"}
	tests := []struct {
		name   string
		tls    bool
		had    []metav1.Condition
		report servedcert.Report
		known  bool
		// want is the condition as (status, reason, message); nil: none.
		want *[3]string
	}{
		{name: "no TLS: none, and an old one removed", had: []metav1.Condition{earlier}, known: true,
			report: servedcert.Report{Answered: 1, Expiring: []servedcert.Expiring{{Pod: "cache-a", NotAfter: end}}}},
		{name: "TLS, no pod answered yet: none", tls: true},
		{name: "TLS, nothing new: as it was", tls: true, had: []metav1.Condition{earlier},
			want: &[3]string{"False", cachev1.ReasonCertificatesValid, "as before"}},
		{name: "every pod valid", tls: true, known: true, report: servedcert.Report{Answered: 3},
			want: &[3]string{"False", cachev1.ReasonCertificatesValid, "every pod that answered serves a certificate with more than a quarter of its lifetime left"}},
		{name: "one pod near its end", tls: true, known: true,
			report: servedcert.Report{Answered: 3, Expiring: []servedcert.Expiring{{Pod: "cache-b", NotAfter: end}}},
			want: &[3]string{"True", cachev1.ReasonCertificateNearExpiry,
				`pod cache-b serves a certificate that ends at 2026-12-04T16:00:00Z: renew the certificate in Secret "cache-tls"; the pods load it without a restart`}},
		{name: "ended on one pod, near on two", tls: true, known: true,
			report: servedcert.Report{Answered: 3, Expiring: []servedcert.Expiring{
				{Pod: "cache-c", NotAfter: end.Add(-time.Hour), Expired: true}, {Pod: "cache-a", NotAfter: end}, {Pod: "cache-b", NotAfter: end}}},
			want: &[3]string{"True", cachev1.ReasonCertificateExpired,
				`pod cache-c serves a certificate that ended at 2026-12-04T15:00:00Z, and 2 more pods do: renew the certificate in Secret "cache-tls"; the pods load it without a restart`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mc := gen.Memcached("shop", "cache")
			if tt.tls {
				gen.WithTLS("cache-tls")(mc)
			}
			st := withServedCertificates(mc, cachev1.MemcachedStatus{Conditions: tt.had}, tt.report, tt.known)
			checkCondition(t, meta.FindStatusCondition(st.Conditions, cachev1.ConditionCertificateExpiring), tt.want)
		})
	}
}
