package controllers

import (
	"context"
	"fmt"
	"slices"

	cmapi "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	cmmeta "github.com/cert-manager/cert-manager/pkg/apis/meta/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
)

// clusterDomain is the DNS domain of the Services' long names. Clusters may
// rename it; the ".svc" names, which need none, are in the certificate too.
const clusterDomain = "cluster.local"

// CertManagerServed reports whether the API server serves cert-manager's
// Certificate. Where it does not, a Memcached with spec.tls.issuerRef says
// so in its CertificateReady condition, and everything else works.
func CertManagerServed(dc discovery.DiscoveryInterface) (bool, error) {
	return servesResources(dc, cmapi.SchemeGroupVersion, "certificates")
}

// wantsCertificate reports whether mc asks the operator for a Certificate.
func wantsCertificate(mc *cachev1.Memcached) bool {
	return mc.Spec.TLS != nil && mc.Spec.TLS.IssuerRef != nil
}

// desiredCertificate is the Certificate of mc, named after it, that has the
// issuer write spec.tls's Secret, beside the empty object its live state is
// read into. Without an issuerRef the want is nil and only the kind and the
// live object are of use: to delete the one left.
func desiredCertificate(mc *cachev1.Memcached) optionalObject {
	live := &cmapi.Certificate{}
	o := optionalObject{kind: cmapi.CertificateKind, live: live}
	if !wantsCertificate(mc) {
		return o
	}
	ref := mc.Spec.TLS.IssuerRef
	spec := cmapi.CertificateSpec{
		SecretName: mc.Spec.TLS.SecretName,
		DNSNames:   certificateDNSNames(mc),
		IssuerRef:  cmmeta.IssuerReference{Name: ref.Name, Kind: ref.Kind, Group: ref.Group},
	}
	want := &cmapi.Certificate{
		TypeMeta: metav1.TypeMeta{APIVersion: cmapi.SchemeGroupVersion.String(), Kind: cmapi.CertificateKind},
		ObjectMeta: metav1.ObjectMeta{Name: mc.Name, Namespace: mc.Namespace, Labels: objectLabels(mc),
			Annotations:     desiredHash(map[string]any{"kind": cmapi.CertificateKind, "spec": spec}),
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(mc, cachev1.GroupVersion.WithKind("Memcached"))}},
		Spec: spec,
	}
	o.want = want
	// Only the fields the operator sets: a user may add others (a key
	// algorithm, a duration) and the operator leaves them.
	o.same = func() bool {
		return sameMeta(live, want) && live.Spec.SecretName == spec.SecretName &&
			slices.Equal(live.Spec.DNSNames, spec.DNSNames) && live.Spec.IssuerRef == spec.IssuerRef
	}
	return o
}

// certificateDNSNames are the names a client of mc may verify: the headless
// Service's, and each pod's record under it (a wildcard, as pods come and
// go), each with and without the cluster domain.
func certificateDNSNames(mc *cachev1.Memcached) []string {
	svc := mc.Name + "." + mc.Namespace + ".svc"
	return []string{svc, svc + "." + clusterDomain, "*." + svc, "*." + svc + "." + clusterDomain}
}

// reconcileCertificate applies mc's Certificate, or deletes the one it
// controls when it no longer has an issuerRef. It writes nothing where
// cert-manager's API is not served.
func (r *MemcachedReconciler) reconcileCertificate(ctx context.Context, mc *cachev1.Memcached, o optionalObject) error {
	if !r.opts.CertManager {
		return nil
	}
	return r.reconcileOptional(ctx, mc, o, wantsCertificate(mc), "spec.tls.issuerRef is gone")
}

// liveCertificate is mc's Certificate as the cache holds it, nil when mc
// asks for none or it is not there yet.
func (r *MemcachedReconciler) liveCertificate(ctx context.Context, mc *cachev1.Memcached) (*cmapi.Certificate, error) {
	if !wantsCertificate(mc) || !r.opts.CertManager {
		return nil, nil
	}
	cert := &cmapi.Certificate{}
	err := r.client.Get(ctx, client.ObjectKeyFromObject(mc), cert)
	if apierrors.IsNotFound(err) || (err == nil && !metav1.IsControlledBy(cert, mc)) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the Certificate: %w", err)
	}
	return cert, nil
}

// withCertificateReady sets st's CertificateReady condition from mc's
// Certificate (nil: not made yet), or says that cert-manager's API is not
// served (served false). A Memcached without an issuerRef has none.
func withCertificateReady(mc *cachev1.Memcached, st cachev1.MemcachedStatus, served bool, cert *cmapi.Certificate) cachev1.MemcachedStatus {
	if !wantsCertificate(mc) {
		meta.RemoveStatusCondition(&st.Conditions, cachev1.ConditionCertificateReady)
		return st
	}
	ref := mc.Spec.TLS.IssuerRef
	c := metav1.Condition{Type: cachev1.ConditionCertificateReady, Status: metav1.ConditionFalse,
		Reason: cachev1.ReasonCertificatePending, ObservedGeneration: mc.Generation,
		Message: fmt.Sprintf("waiting for cert-manager to issue Certificate %q from %s %q", mc.Name, ref.Kind, ref.Name)}
	var ready *cmapi.CertificateCondition
	if cert != nil {
		for i := range cert.Status.Conditions {
			if cert.Status.Conditions[i].Type == cmapi.CertificateConditionReady {
				ready = &cert.Status.Conditions[i]
			}
		}
	}
	switch {
	case !served:
		c.Reason = cachev1.ReasonCertManagerNotServed
		c.Message = fmt.Sprintf("spec.tls.issuerRef needs cert-manager's Certificate API (%s), which the cluster did not serve "+
			"when the operator started: install cert-manager and restart the operator, or remove issuerRef and write Secret %q yourself",
			cmapi.SchemeGroupVersion, mc.Spec.TLS.SecretName)
	case ready == nil || ready.ObservedGeneration != cert.Generation:
	case ready.Status == cmmeta.ConditionTrue:
		c.Status, c.Reason = metav1.ConditionTrue, cachev1.ReasonCertificateIssued
		c.Message = fmt.Sprintf("Certificate %q is issued into Secret %q", mc.Name, mc.Spec.TLS.SecretName)
	default:
		c.Message = fmt.Sprintf("Certificate %q: %s", mc.Name, ready.Message)
	}
	meta.SetStatusCondition(&st.Conditions, c)
	return st
}
