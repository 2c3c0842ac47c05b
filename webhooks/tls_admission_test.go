package webhooks_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
	"github.com/example-inc/memcached-operator/api/v1/gen"
)

var _ = Describe("spec.tls through the API server", func() {
	var ns string

	BeforeEach(func(ctx SpecContext) {
		ns = newNamespace(ctx, "tls")
		warnings.take()
	})

	DescribeTable("stores",
		func(ctx SpecContext, tls map[string]any, want *cachev1.MemcachedTLS) {
			Expect(k8sClient.Create(ctx, memcachedObject(ns, "tls", withSpec(map[string]any{"tls": tls})))).To(Succeed())
			Expect(stored(ctx, ns, "tls").Spec.TLS).To(Equal(want))
			Expect(warnings.take()).To(BeEmpty())
		},
		Entry("the defaults: an External Secret, no client certificates, the cluster's minimum", map[string]any{"secretName": "cache-tls"},
			&cachev1.MemcachedTLS{SecretName: "cache-tls", Issuer: cachev1.TLSIssuerExternal, ClientCertificates: cachev1.ClientCertificatesNone}),
		Entry("an issuerRef's defaults: an Issuer of cert-manager.io", map[string]any{"secretName": "cache-tls", "issuerRef": map[string]any{"name": "my-ca"}},
			&cachev1.MemcachedTLS{SecretName: "cache-tls", Issuer: cachev1.TLSIssuerExternal, ClientCertificates: cachev1.ClientCertificatesNone,
				IssuerRef: &cachev1.TLSIssuerReference{Name: "my-ca", Kind: "Issuer", Group: "cert-manager.io"}}),
	)

	DescribeTable("refuses bad values with the field's path",
		func(ctx SpecContext, tls map[string]any, want string) {
			err := k8sClient.Create(ctx, memcachedObject(ns, "bad", withSpec(map[string]any{"tls": tls})))
			Expect(err).To(MatchError(ContainSubstring(want)))
		},
		// The defaulting webhook's decoding writes the missing name as "".
		Entry("no Secret", map[string]any{}, `is invalid: spec.tls.secretName: Invalid value: "": must be a Secret's name`),
		Entry("a Secret name with capitals", map[string]any{"secretName": "Cache_TLS"},
			`spec.tls.secretName: Invalid value: "Cache_TLS": must be a Secret's name: lower-case letters, digits, '-' and '.'`),
		Entry("TLS 1.1", map[string]any{"secretName": "c", "minVersion": "VersionTLS11"},
			`spec.tls.minVersion: Unsupported value: "VersionTLS11": supported values: "VersionTLS12", "VersionTLS13"`),
		Entry("an unknown issuer", map[string]any{"secretName": "c", "issuer": "Vault"},
			`spec.tls.issuer: Unsupported value: "Vault"`),
		Entry("client certificates from the service CA", map[string]any{"secretName": "c", "issuer": "OpenShiftServiceCA",
			"clientCertificates": "Required"}, `spec.tls: Invalid value: spec.tls.clientCertificates: Required needs the Secret's ca.crt`),
		Entry("an issuerRef with the service CA", map[string]any{"secretName": "c", "issuer": "OpenShiftServiceCA",
			"issuerRef": map[string]any{"name": "my-ca"}}, `spec.tls: Invalid value: spec.tls.issuerRef: OpenShift's service CA writes the Secret`),
		Entry("an issuerRef without a name", map[string]any{"secretName": "c", "issuerRef": map[string]any{}},
			`spec.tls.issuerRef.name: Invalid value: "": spec.tls.issuerRef.name in body should be at least 1 chars long`),
		Entry("a kind cert-manager.io does not issue from", map[string]any{"secretName": "c",
			"issuerRef": map[string]any{"name": "my-ca", "kind": "Vault"}},
			`spec.tls.issuerRef: Invalid value: spec.tls.issuerRef.kind: cert-manager.io's issuers are Issuer and ClusterIssuer`),
		Entry("an external issuer's group with a kind of its own", map[string]any{"secretName": "c",
			"issuerRef": map[string]any{"name": "my-ca", "kind": "issuer", "group": "awspca.cert-manager.io"}},
			`spec.tls.issuerRef.kind: Invalid value: "issuer": spec.tls.issuerRef.kind in body should match`),
	)

	Context("on update", func() {
		var mc *cachev1.Memcached

		BeforeEach(func(ctx SpecContext) { mc = createQuietly(ctx, gen.Memcached(ns, "cache")) })

		It("warns that turning TLS on and off replaces the pods one at a time", func(ctx SpecContext) {
			gen.WithTLS("cache-tls")(mc)
			Expect(k8sClient.Update(ctx, mc)).To(Succeed())
			Expect(warnings.take()).To(ConsistOf("changing spec.tls (off to on) replaces every memcached pod, " +
				"one at a time, and each new pod starts with an empty cache"))
			mc.Spec.TLS = nil
			Expect(k8sClient.Update(ctx, mc)).To(Succeed())
			Expect(warnings.take()).To(ConsistOf(HavePrefix("changing spec.tls (on to off) replaces every memcached pod")))
		})

		It("names the TLS fields that reach the pods, and not the issuer", func(ctx SpecContext) {
			gen.WithTLS("cache-tls")(mc)
			Expect(k8sClient.Update(ctx, mc)).To(Succeed())
			warnings.take()
			mc.Spec.TLS.MinVersion = "VersionTLS13"
			mc.Spec.TLS.ClientCertificates = cachev1.ClientCertificatesRequired
			Expect(k8sClient.Update(ctx, mc)).To(Succeed())
			Expect(warnings.take()).To(ConsistOf(HavePrefix(
				"changing spec.tls.clientCertificates (None to Required), spec.tls.minVersion (the cluster's to VersionTLS13) replaces")))
			mc.Spec.TLS.Issuer = cachev1.TLSIssuerOpenShiftServiceCA
			mc.Spec.TLS.ClientCertificates = cachev1.ClientCertificatesNone
			Expect(k8sClient.Update(ctx, mc)).To(Succeed())
			Expect(warnings.take()).To(ConsistOf(HavePrefix("changing spec.tls.clientCertificates (Required to None) replaces")))
		})
	})
})
