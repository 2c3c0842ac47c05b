package controllers

import (
	"testing"

	cmapi "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	cmmeta "github.com/cert-manager/cert-manager/pkg/apis/meta/v1"
	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
	"github.com/example-inc/memcached-operator/api/v1/gen"
)

func TestDesiredCertificate(t *testing.T) {
	mc := gen.Memcached("shop", "cache", gen.WithTLS("cache-tls"), gen.WithIssuer(cmapi.ClusterIssuerKind, "corp-ca"))
	o := desiredCertificate(mc)
	cert, ok := o.want.(*cmapi.Certificate)
	if !ok {
		t.Fatalf("want is %T, not a Certificate", o.want)
	}
	if cert.Name != "cache" || cert.Namespace != "shop" || !metav1.IsControlledBy(cert, mc) {
		t.Errorf("Certificate %s/%s, owners %v: want shop/cache controlled by the Memcached", cert.Namespace, cert.Name, cert.OwnerReferences)
	}
	if cert.Spec.SecretName != "cache-tls" {
		t.Errorf("secretName %q, want the one the pods mount", cert.Spec.SecretName)
	}
	wantNames := []string{"cache.shop.svc", "cache.shop.svc.cluster.local", "*.cache.shop.svc", "*.cache.shop.svc.cluster.local"}
	if diff := cmp.Diff(wantNames, cert.Spec.DNSNames); diff != "" {
		t.Errorf("dnsNames (-want +got):\n%s", diff)
	}
	if want := (cmmeta.IssuerReference{Name: "corp-ca", Kind: cmapi.ClusterIssuerKind, Group: "cert-manager.io"}); cert.Spec.IssuerRef != want {
		t.Errorf("issuerRef %+v, want %+v", cert.Spec.IssuerRef, want)
	}

	// What "same" compares: the live object as the API server returns the
	// applied one, then with each field the operator owns changed.
	live := o.live.(*cmapi.Certificate)
	reset := func() { cert.DeepCopyInto(live); live.UID = "some-uid" }
	reset()
	live.Spec.Duration = &metav1.Duration{} // a user's own field stays theirs
	if !o.same() {
		t.Errorf("a live Certificate as applied, with a user's duration, differs")
	}
	for name, edit := range map[string]func(){
		"secretName": func() { live.Spec.SecretName = "other" },
		"dnsNames":   func() { live.Spec.DNSNames = live.Spec.DNSNames[:1] },
		"issuerRef":  func() { live.Spec.IssuerRef.Name = "other" },
		"labels":     func() { live.Labels = nil },
		"hash":       func() { live.Annotations = nil },
	} {
		reset()
		edit()
		if o.same() {
			t.Errorf("a live Certificate with another %s is the same", name)
		}
	}

	if o := desiredCertificate(gen.Memcached("shop", "cache", gen.WithTLS("cache-tls"))); o.want != nil || o.live == nil {
		t.Errorf("without issuerRef: want %v, live %v; want none, and a live object to delete into", o.want, o.live)
	}
}

func TestWithCertificateReady(t *testing.T) {
	ready := func(status cmmeta.ConditionStatus, observed int64, message string) *cmapi.Certificate {
		return &cmapi.Certificate{ObjectMeta: metav1.ObjectMeta{Generation: 2}, Status: cmapi.CertificateStatus{
			Conditions: []cmapi.CertificateCondition{{Type: cmapi.CertificateConditionReady, Status: status,
				ObservedGeneration: observed, Message: message}}}}
	}
	earlier := metav1.Condition{Type: cachev1.ConditionCertificateReady, Status: metav1.ConditionTrue, Reason: cachev1.ReasonCertificateIssued}
	waiting := `waiting for cert-manager to issue Certificate "cache" from Issuer "my-ca"`
	tests := []struct {
		name   string
		issuer bool
		served bool
		cert   *cmapi.Certificate
		// want is the condition as (status, reason, message); nil: none.
		want *[3]string
	}{
		{name: "no issuerRef: none, and an old one removed", served: true, cert: ready(cmmeta.ConditionTrue, 2, "")},
		{name: "cert-manager not served", issuer: true, want: &[3]string{"False", cachev1.ReasonCertManagerNotServed,
			`spec.tls.issuerRef needs cert-manager's Certificate API (cert-manager.io/v1), which the cluster did not serve when the operator started: ` +
				`install cert-manager and restart the operator, or remove issuerRef and write Secret "cache-tls" yourself`}},
		{name: "not made yet", issuer: true, served: true, want: &[3]string{"False", cachev1.ReasonCertificatePending, waiting}},
		{name: "cert-manager has not looked at it", issuer: true, served: true, cert: &cmapi.Certificate{},
			want: &[3]string{"False", cachev1.ReasonCertificatePending, waiting}},
		{name: "Ready for an older spec", issuer: true, served: true, cert: ready(cmmeta.ConditionTrue, 1, "up to date"),
			want: &[3]string{"False", cachev1.ReasonCertificatePending, waiting}},
		{name: "not Ready: cert-manager's reason", issuer: true, served: true, cert: ready(cmmeta.ConditionFalse, 2, "Issuer my-ca not found"),
			want: &[3]string{"False", cachev1.ReasonCertificatePending, `Certificate "cache": Issuer my-ca not found`}},
		{name: "Ready", issuer: true, served: true, cert: ready(cmmeta.ConditionTrue, 2, "up to date"),
			want: &[3]string{"True", cachev1.ReasonCertificateIssued, `Certificate "cache" is issued into Secret "cache-tls"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mc := gen.Memcached("shop", "cache", gen.WithTLS("cache-tls"))
			if tt.issuer {
				gen.WithIssuer(cmapi.IssuerKind, "my-ca")(mc)
			}
			st := withCertificateReady(mc, cachev1.MemcachedStatus{Conditions: []metav1.Condition{earlier}}, tt.served, tt.cert)
			checkCondition(t, meta.FindStatusCondition(st.Conditions, cachev1.ConditionCertificateReady), tt.want)
		})
	}
}

// checkCondition asserts that got is want as (status, reason, message), or
// that there is none when want is nil.
func checkCondition(t *testing.T, got *metav1.Condition, want *[3]string) {
	t.Helper()
	switch {
	case want == nil && got != nil:
		t.Errorf("condition %+v, want none", *got)
	case want == nil:
	case got == nil:
		t.Errorf("no condition, want %q", *want)
	case [3]string{string(got.Status), got.Reason, got.Message} != *want:
		t.Errorf("condition (%s, %s, %q), want %q", got.Status, got.Reason, got.Message, *want)
	}
}
