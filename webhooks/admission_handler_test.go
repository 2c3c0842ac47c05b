package webhooks_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
	"github.com/example-inc/memcached-operator/api/v1/gen"
	"github.com/example-inc/memcached-operator/webhooks"
)

// These tests call the webhooks' HTTP handlers directly, as registered by
// SetupWithManager on a manager that never starts (no API server needed).
// That is how policies other than the default are tested, and how requests
// the API server would never send are tried.

const (
	mutatePath   = "/mutate-cache-example-com-v1-memcached"
	validatePath = "/validate-cache-example-com-v1-memcached"
)

// newWebhookHandler returns the mux that serves the webhooks for policy.
func newWebhookHandler(t testing.TB, policy webhooks.SizePolicy) http.Handler {
	t.Helper()
	mgr := newManager(t)
	if err := webhooks.SetupWithManager(mgr, policy); err != nil {
		t.Fatal(err)
	}
	return mgr.GetWebhookServer().WebhookMux()
}

// newManager is a manager of an API server that is never reached.
func newManager(t testing.TB) ctrl.Manager {
	t.Helper()
	mgr, err := ctrl.NewManager(&rest.Config{Host: "https://127.0.0.1:1"}, ctrl.Options{
		Scheme:  gen.Scheme(),
		Metrics: metricsserver.Options{BindAddress: "0"},
	})
	if err != nil {
		t.Fatal(err)
	}
	return mgr
}

// reviewOption and review build AdmissionReview request bodies.
type reviewOption func(*admissionv1.AdmissionRequest)

func review(op admissionv1.Operation, opts ...reviewOption) []byte {
	req := &admissionv1.AdmissionRequest{
		UID:       types.UID("0b5fe4a2-0c3f-4b7a-9d55-2b7c1c6f0001"),
		Kind:      metav1.GroupVersionKind{Group: "cache.example.com", Version: "v1", Kind: "Memcached"},
		Resource:  metav1.GroupVersionResource{Group: "cache.example.com", Version: "v1", Resource: "memcacheds"},
		Namespace: "default",
		Operation: op,
	}
	for _, o := range opts {
		o(req)
	}
	b, err := json.Marshal(admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request:  req,
	})
	if err != nil {
		panic(err)
	}
	return b
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// object sets the request's object: a value to marshal, or raw JSON bytes.
func object(v any) reviewOption {
	return func(r *admissionv1.AdmissionRequest) { r.Object.Raw = rawOf(v) }
}

func oldObject(v any) reviewOption {
	return func(r *admissionv1.AdmissionRequest) { r.OldObject.Raw = rawOf(v) }
}

func rawOf(v any) []byte {
	if b, ok := v.([]byte); ok {
		return b
	}
	return mustJSON(v)
}

// kind sets the request's kind (version v1).
func kind(group, k string) reviewOption {
	return func(r *admissionv1.AdmissionRequest) {
		r.Kind = metav1.GroupVersionKind{Group: group, Version: "v1", Kind: k}
	}
}

func scaleResource() reviewOption {
	return func(r *admissionv1.AdmissionRequest) {
		r.Kind = metav1.GroupVersionKind{Group: "autoscaling", Version: "v1", Kind: "Scale"}
		r.SubResource = "scale"
	}
}

// post sends body to path and returns the AdmissionResponse. The webhook
// always answers HTTP 200: the verdict and its code are in the body.
func post(t testing.TB, h http.Handler, path string, body []byte, contentType string) *admissionv1.AdmissionResponse {
	t.Helper()
	var r *http.Request
	if body == nil {
		r = httptest.NewRequest(http.MethodPost, path, nil) // http.NoBody, as a server sees Content-Length: 0
	} else {
		r = httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
	}
	if contentType != "" {
		r.Header.Set("Content-Type", contentType)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != http.StatusOK {
		t.Fatalf("HTTP status %d, body %s", w.Code, w.Body)
	}
	var ar admissionv1.AdmissionReview
	if err := json.Unmarshal(w.Body.Bytes(), &ar); err != nil {
		t.Fatalf("response is not an AdmissionReview: %v: %s", err, w.Body)
	}
	if ar.Response == nil {
		t.Fatalf("AdmissionReview without a response: %s", w.Body)
	}
	return ar.Response
}

func TestMalformedRequestsAreRefused(t *testing.T) {
	h := newWebhookHandler(t, webhooks.DefaultSizePolicy())
	pod := &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx"}}},
	}
	podWithoutTypeMeta := pod.DeepCopy()
	podWithoutTypeMeta.TypeMeta = metav1.TypeMeta{}
	good := mustJSON(gen.Memcached("default", "cache", gen.WithSize(3)))
	huge := append([]byte(`{"request":{"object":{"metadata":{"annotations":{"a":"`),
		bytes.Repeat([]byte("x"), 8<<20)...)
	huge = append(huge, `"}}}}}`...)

	// The two webhooks share the decoding but not its order of checks, so a
	// row says what each answers; notFor marks a webhook a row does not
	// apply to (the defaulter reads only the new object).
	const (
		notFor       = "-"
		noContent    = "there is no content to decode"
		badJSON      = "couldn't get version/kind; json parse error: "
		unknownOp    = `unknown operation ""`
		notMemcached = "this webhook admits Memcached.cache.example.com, not Pod"
		podIntoMC    = "unable to decode /v1, Kind=Pod into *v1.Memcached"
	)
	tests := []struct {
		name                     string
		body                     []byte
		contentType              string
		wantCode                 int32
		wantMutate, wantValidate string
	}{
		{"no body", nil, "application/json", 400, "request body is empty", "request body is empty"},
		{"a body of zero bytes", []byte{}, "application/json", 400, noContent, unknownOp},
		{"not JSON", []byte("hello"), "application/json", 400, badJSON + "json: cannot unmarshal string", badJSON + "json: cannot unmarshal string"},
		{"truncated JSON", review(admissionv1.Create, object(good))[:80], "application/json", 400, badJSON + "unexpected end of JSON input", badJSON + "unexpected end of JSON input"},
		{"a JSON array", []byte(`[1,2,3]`), "application/json", 400, badJSON + "json: cannot unmarshal array", badJSON + "json: cannot unmarshal array"},
		{"JSON null", []byte(`null`), "application/json", 400, noContent, unknownOp},
		{"a review without a request", []byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}`), "application/json", 400, noContent, unknownOp},
		{"wrong content type", review(admissionv1.Create, object(good)), "text/plain", 400, "contentType=text/plain, expected application/json", "contentType=text/plain, expected application/json"},
		{"no content type", review(admissionv1.Create, object(good)), "", 400, "contentType=, expected application/json", "contentType=, expected application/json"},
		{"body over the 7 MiB limit", huge, "application/json", 413, "request entity is too large; limit is 7340032 bytes", "request entity is too large; limit is 7340032 bytes"},
		{"create without an object", review(admissionv1.Create), "application/json", 400, noContent, noContent},
		{"object that is a string", review(admissionv1.Create, object(`"cache"`)), "application/json", 400, badJSON + "json: cannot unmarshal string", badJSON + "json: cannot unmarshal string"},
		{"object that is truncated JSON", []byte(`{"request":{"uid":"1","operation":"CREATE","object":{"apiVersion":"cache.example.com/v1","kind":"Memc`),
			"application/json", 400, badJSON + "unexpected end of JSON input", badJSON + "unexpected end of JSON input"},
		{"a Pod", review(admissionv1.Create, kind("", "Pod"), object(pod)), "application/json", 400, podIntoMC, podIntoMC},
		{"a Pod labelled as a Memcached", review(admissionv1.Create, object(pod)), "application/json", 400, podIntoMC, podIntoMC},
		{"a Pod without apiVersion and kind", review(admissionv1.Create, kind("", "Pod"), object(podWithoutTypeMeta)), "application/json", 400, notMemcached, notMemcached},
		{"a Memcached in a request for a Pod", review(admissionv1.Create, kind("", "Pod"), object(good)), "application/json", 400, notMemcached, notMemcached},
		{"another group's Memcached", review(admissionv1.Create, kind("other.example.com", "Memcached"),
			object(bytes.Replace(good, []byte("cache.example.com/v1"), []byte("other.example.com/v1"), 1))), "application/json", 400,
			`no kind "Memcached" is registered for version "other.example.com/v1"`, `no kind "Memcached" is registered for version "other.example.com/v1"`},
		{"update without the old object", review(admissionv1.Update, object(good)), "application/json", 400, notFor, noContent},
	}
	for _, path := range []string{mutatePath, validatePath} {
		for _, tt := range tests {
			want := tt.wantValidate
			if path == mutatePath {
				want = tt.wantMutate
			}
			if want == notFor {
				continue
			}
			t.Run(path+"/"+tt.name, func(t *testing.T) {
				resp := post(t, h, path, tt.body, tt.contentType)
				if resp.Allowed {
					t.Fatalf("allowed: %+v", resp)
				}
				if resp.Result == nil || resp.Result.Code != tt.wantCode {
					t.Fatalf("result %+v, want code %d", resp.Result, tt.wantCode)
				}
				if !strings.Contains(resp.Result.Message, want) {
					t.Fatalf("message %q, want it to contain %q", resp.Result.Message, want)
				}
			})
		}
	}
}

// TestDefaultingPatch: the defaulting itself is TestSizePolicyOnAMemcached's;
// here its patch, for a spec left out or null too, and the policy the
// handler was set up with.
func TestDefaultingPatch(t *testing.T) {
	tests := []struct {
		name   string
		policy webhooks.SizePolicy
		obj    any // a Memcached, or its JSON
		want   int32
	}{
		{"size omitted, default policy", webhooks.DefaultSizePolicy(), gen.Memcached("default", "cache"), 3},
		{"spec omitted", webhooks.DefaultSizePolicy(),
			[]byte(`{"apiVersion":"cache.example.com/v1","kind":"Memcached","metadata":{"name":"cache"}}`), 3},
		{"spec null", webhooks.DefaultSizePolicy(),
			[]byte(`{"apiVersion":"cache.example.com/v1","kind":"Memcached","metadata":{"name":"cache"},"spec":null}`), 3},
		{"size omitted, default 5", webhooks.SizePolicy{Default: 5, Min: 2, Max: 8}, gen.Memcached("default", "cache"), 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := defaulted(t, tt.policy, tt.obj, nil).Spec.Size; got == nil || *got != tt.want {
				t.Fatalf("patched size %v, want %d", got, tt.want)
			}
		})
	}
}

// TestDefaultingKeepsUnknownFields sends a spec with a field the Go type
// does not know, as a newer CRD's object reaches an older operator during
// an upgrade: the patch sets the defaults and leaves that field as it was.
func TestDefaultingKeepsUnknownFields(t *testing.T) {
	doc := []byte(`{"apiVersion":"cache.example.com/v1","kind":"Memcached","metadata":{"name":"cache"},` +
		`"spec":{"memory":"64Mi","futureField":{"nested":[1,2]}}}`)
	var got struct {
		Spec map[string]any `json:"spec"`
	}
	if err := json.Unmarshal(patched(t, webhooks.DefaultSizePolicy(), doc, nil), &got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]any{"nested": []any{1.0, 2.0}}, got.Spec["futureField"]); diff != "" {
		t.Errorf("spec.futureField after the patch (-want +got):\n%s", diff)
	}
	if got.Spec["size"] != 3.0 || got.Spec["resources"] == nil {
		t.Errorf("spec not defaulted: %v", got.Spec)
	}
}

// TestValidationResponses: the policy's cases are TestSizePolicyOnAMemcached's;
// these are what the handler adds, its Invalid status and its warnings, and
// what only an update has: the old object.
func TestValidationResponses(t *testing.T) {
	def := webhooks.DefaultSizePolicy()
	narrow := webhooks.SizePolicy{Default: 5, Min: 2, Max: 8}
	mc := func(name string, size int32, opts ...gen.MemcachedOption) *cachev1.Memcached {
		return gen.Memcached("default", name, append(opts, gen.WithSize(size))...)
	}
	tests := []struct {
		name     string
		policy   webhooks.SizePolicy
		old, obj *cachev1.Memcached // create without old, delete without obj
		wantErr  string             // "" when allowed; else the expected message
		wantWarn string             // a prefix of the expected warning, if any
	}{
		{"create over the maximum", def, nil, mc("cache", 40),
			`Memcached.cache.example.com "cache" is invalid: spec.size: Invalid value: 40: must be no more than 16`, ""},
		{"create with size 1 warns", def, nil, mc("cache", 1), "", "spec.size: 1 pod gives no redundancy: "},
		{"create with a dotted name", def, nil, mc("a.b", 3),
			`Memcached.cache.example.com "a.b" is invalid: metadata.name: Invalid value: "a.b": the name is also the Memcached's Service name, so: a DNS-1035 label`, ""},
		// No warning of size 1 beside the error.
		{"narrow policy: create under the minimum", narrow, nil, mc("cache", 1),
			`Memcached.cache.example.com "cache" is invalid: spec.size: Invalid value: 1: must be at least 2`, ""},
		{"narrow policy: create at the maximum", narrow, nil, mc("cache", 8), "", ""},

		{"update of the size within range", def, mc("cache", 3), mc("cache", 5), "", ""},
		{"update of the size over the maximum", def, mc("cache", 3), mc("cache", 17), "spec.size: Invalid value: 17: must be no more than 16", ""},
		{"status-only update", def, mc("cache", 3), mc("cache", 3, gen.WithReadyReplicas(3)), "", ""},
		{"label edit of an object over a newer, stricter maximum", narrow, mc("cache", 40), mc("cache", 40, gen.WithLabels("team", "web")), "", ""},
		{"status update of an object over a newer, stricter maximum", narrow, mc("cache", 40), mc("cache", 40, gen.WithReadyReplicas(40)), "", ""},
		{"update of an object with a name that is no longer admitted", def, mc("old.name", 3), mc("old.name", 3, gen.WithLabels("a", "b")), "", ""},
		{"resizing an object over the maximum must meet the policy", narrow, mc("cache", 40), mc("cache", 30),
			"spec.size: Invalid value: 30: must be no more than 8", ""},
		{"resizing an object over the maximum into range", narrow, mc("cache", 40), mc("cache", 8), "", ""},
		{"update to size 1 warns", def, mc("cache", 3), mc("cache", 1), "", "spec.size: 1 pod gives no redundancy: "},
		{"update that keeps size 1 does not warn again", def, mc("cache", 1), mc("cache", 1, gen.WithLabels("a", "b")), "", ""},
		{"delete", def, mc("cache", 40), nil, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var body []byte
			switch {
			case tt.old == nil:
				body = review(admissionv1.Create, object(tt.obj))
			case tt.obj == nil:
				body = review(admissionv1.Delete, oldObject(tt.old))
			default:
				body = review(admissionv1.Update, oldObject(tt.old), object(tt.obj))
			}
			checkValidation(t, post(t, newWebhookHandler(t, tt.policy), validatePath, body, "application/json"), tt.wantErr, tt.wantWarn)
		})
	}
}

func TestScaleValidation(t *testing.T) {
	narrow := webhooks.SizePolicy{Default: 5, Min: 2, Max: 8}
	h := newWebhookHandler(t, narrow)
	scale := func(n int32) *autoscalingv1.Scale {
		return &autoscalingv1.Scale{
			TypeMeta:   metav1.TypeMeta{APIVersion: "autoscaling/v1", Kind: "Scale"},
			ObjectMeta: metav1.ObjectMeta{Name: "cache", Namespace: "default"},
			Spec:       autoscalingv1.ScaleSpec{Replicas: n},
		}
	}
	tests := []struct {
		name     string
		old, new int32
		wantErr  string
	}{
		{"within range", 5, 8, ""},
		{"over the maximum", 5, 9, `Memcached.cache.example.com "cache" is invalid: spec.size: Invalid value: 9: must be no more than 8`},
		{"under the minimum", 5, 1, `Memcached.cache.example.com "cache" is invalid: spec.size: Invalid value: 1: must be at least 2`},
		{"unchanged, though over a newer maximum", 40, 40, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := review(admissionv1.Update, scaleResource(), oldObject(scale(tt.old)), object(scale(tt.new)))
			checkValidation(t, post(t, h, webhooks.ScaleValidatePath, body, "application/json"), tt.wantErr, "")
		})
	}
	t.Run("a Memcached is not a Scale", func(t *testing.T) {
		body := review(admissionv1.Update, oldObject(gen.Memcached("default", "cache", gen.WithSize(3))), object(gen.Memcached("default", "cache", gen.WithSize(3))))
		resp := post(t, h, webhooks.ScaleValidatePath, body, "application/json")
		if resp.Allowed || resp.Result.Code != 400 {
			t.Fatalf("%+v, want a 400 denial", resp.Result)
		}
	})
}

// checkValidation asserts that resp allows (wantErr == "") or denies with
// an Invalid (422) status whose message starts with wantErr or contains it,
// and that it carries a warning starting with wantWarn, or none.
func checkValidation(t *testing.T, resp *admissionv1.AdmissionResponse, wantErr, wantWarn string) {
	t.Helper()
	if wantErr == "" {
		if !resp.Allowed {
			t.Fatalf("denied: %+v", resp.Result)
		}
	} else {
		if resp.Allowed {
			t.Fatalf("allowed, want %q", wantErr)
		}
		r := resp.Result
		if r.Code != http.StatusUnprocessableEntity || r.Reason != metav1.StatusReasonInvalid || r.Details == nil || len(r.Details.Causes) == 0 {
			t.Fatalf("result %+v, want an Invalid status with causes", r)
		}
		if !strings.Contains(r.Message, wantErr) {
			t.Fatalf("message %q, want %q", r.Message, wantErr)
		}
	}
	switch {
	case wantWarn == "" && len(resp.Warnings) > 0:
		t.Fatalf("warnings %q, want none", resp.Warnings)
	case wantWarn != "" && (len(resp.Warnings) != 1 || !strings.HasPrefix(resp.Warnings[0], wantWarn)):
		t.Fatalf("warnings %q, want one starting %q", resp.Warnings, wantWarn)
	}
}

func TestSetupWithManagerRejectsAnInvalidPolicy(t *testing.T) {
	err := webhooks.SetupWithManager(newManager(t), webhooks.SizePolicy{Default: 3, Min: 1, Max: 2})
	if err == nil || !strings.Contains(err.Error(), "--default-size=3") {
		t.Fatalf("SetupWithManager() = %v, want the policy's error", err)
	}
}

// An object that does not decode into a Memcached is let through for the
// schema to refuse (see tolerateUndecodable), after a look at its kind.
// Whoever reaches the webhook port can send one of megabytes of nested
// arrays, which decoded into maps takes some thirty times its size: the
// look must cost about the body's size, not a multiple of the nesting.
func TestUndecodableObjectCostsAboutItsSize(t *testing.T) {
	h := newWebhookHandler(t, webhooks.DefaultSizePolicy())
	const head = `{"apiVersion":"cache.example.com/v1","kind":"Memcached","metadata":{"name":"x"},"spec":{"size":"x","pad":[[]`
	obj := []byte(head + strings.Repeat(",[]", 1<<20/3) + `]}}`)
	body := review(admissionv1.Create, object(obj))
	post(t, h, mutatePath, body, "application/json") // warm up: first use initialises codecs

	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	resp := post(t, h, mutatePath, body, "application/json")
	runtime.ReadMemStats(&after)
	if !resp.Allowed {
		t.Fatalf("refused: %v", resp.Result)
	}
	allocated := after.TotalAlloc - before.TotalAlloc
	t.Logf("a %d-byte review allocated %d bytes (%.1f times its size)", len(body), allocated, float64(allocated)/float64(len(body)))
	if limit := 8 * uint64(len(body)); allocated > limit {
		t.Errorf("a %d-byte review allocated %d bytes, more than %d", len(body), allocated, limit)
	}
}
