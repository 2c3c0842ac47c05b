package webhooks_test

import (
	"encoding/json"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/validation/field"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
	"github.com/example-inc/memcached-operator/api/v1/gen"
	"github.com/example-inc/memcached-operator/controllers/operand"
	"github.com/example-inc/memcached-operator/webhooks"
)

// FuzzAdmissionReview posts arbitrary bytes to the validating and mutating
// handlers. Neither may panic (controller-runtime would turn a panic into a
// 500 answer) and every refusal is a 4xx. The validating handler allows only
// what is a real request: a known operation and, for CREATE and UPDATE, an
// object that decodes as a Memcached (whose spec may be left out); a CREATE
// it allows meets the policy and memcached's rules. The mutating handler
// allows no size below 1, and passes unchanged only a Memcached that does
// not decode, for the schema to refuse.
func FuzzAdmissionReview(f *testing.F) {
	policy := webhooks.DefaultSizePolicy()
	h := newWebhookHandler(f, policy)
	decoder := serializer.NewCodecFactory(gen.Scheme()).UniversalDeserializer()

	f.Fuzz(func(t *testing.T, body []byte) {
		for _, path := range []string{validatePath, mutatePath} {
			resp := post(t, h, path, body, "application/json")
			if !resp.Allowed {
				if resp.Result == nil || resp.Result.Code < 400 || resp.Result.Code >= 500 {
					t.Fatalf("%s: refused without a 4xx code: %+v", path, resp.Result)
				}
				continue
			}

			var ar admissionv1.AdmissionReview
			if err := json.Unmarshal(body, &ar); err != nil || ar.Request == nil {
				t.Fatalf("%s: allowed a body that is not an AdmissionReview (%v): %q", path, err, body)
			}
			req := ar.Request
			switch req.Operation {
			case admissionv1.Delete:
				continue
			case admissionv1.Connect:
				if path == validatePath {
					continue // controller-runtime admits CONNECT unseen; the webhooks are not registered for it
				}
			case admissionv1.Create, admissionv1.Update:
			default:
				t.Fatalf("%s: allowed operation %q: %q", path, req.Operation, body)
			}
			mc := &cachev1.Memcached{}
			if _, gvk, err := decoder.Decode(req.Object.Raw, nil, mc); err != nil {
				// The mutating webhook leaves a Memcached with fields of the
				// wrong type to the schema, unchanged.
				memcachedKind := cachev1.GroupVersion.WithKind("Memcached")
				if path == mutatePath && len(resp.Patch) == 0 && gvk != nil && *gvk == memcachedKind &&
					req.Kind.Group == memcachedKind.Group && req.Kind.Kind == memcachedKind.Kind {
					continue
				}
				t.Fatalf("%s: allowed an object that does not decode (%v): %q", path, err, body)
			}
			if path == mutatePath && mc.Spec.Size != nil && *mc.Spec.Size < 1 {
				t.Fatalf("allowed a size below 1 through the mutating webhook: %q", body)
			}
			if path == validatePath && req.Operation == admissionv1.Create {
				if errs := policy.ValidateMemcached(mc); len(errs) > 0 {
					t.Fatalf("allowed a create that breaks the policy (%v): %q", errs, body)
				}
				if errs := operand.Validate(&mc.Spec, field.NewPath("spec")); len(errs) > 0 {
					t.Fatalf("allowed a create memcached refuses (%v): %q", errs, body)
				}
			}
		}
	})
}
