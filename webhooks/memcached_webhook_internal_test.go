package webhooks

import (
	"context"
	"errors"
	"net/http"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// countingDecoder counts the objects decoded through it.
type countingDecoder struct {
	admission.Decoder
	decoded int
}

func (d *countingDecoder) DecodeRaw(raw runtime.RawExtension, into runtime.Object) error {
	d.decoded++
	return d.Decoder.DecodeRaw(raw, into)
}

// tolerateUndecodable decodes an object a second time only when the
// defaulter could not: every Memcached the API server sends is decoded once.
func TestTolerateUndecodableDecodesOnlyARefusedObject(t *testing.T) {
	tests := []struct {
		name        string
		next        admission.Response
		wantDecoded int
	}{
		{"admitted", admission.Allowed(""), 0},
		{"denied by the policy", admission.Denied("size"), 0},
		{"refused as a bad request", admission.Errored(http.StatusBadRequest, errors.New("json: cannot unmarshal string into spec.size")), 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dec := &countingDecoder{Decoder: admission.NewDecoder(runtime.NewScheme())}
			h := tolerateUndecodable{decoder: dec, next: admission.HandlerFunc(func(context.Context, admission.Request) admission.Response {
				return tt.next
			})}
			req := admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{Operation: admissionv1.Create,
				Object: runtime.RawExtension{Raw: []byte(`{"apiVersion":"cache.example.com/v1","kind":"Memcached"}`)}}}
			h.Handle(t.Context(), req)
			if dec.decoded != tt.wantDecoded {
				t.Errorf("decoded %d times, want %d", dec.decoded, tt.wantDecoded)
			}
		})
	}
}
