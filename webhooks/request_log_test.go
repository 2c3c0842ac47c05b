package webhooks

import (
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

func TestRequestLoggerNamesTheRequestOnlyInWhatIsWritten(t *testing.T) {
	var lines []string
	base := funcr.New(func(prefix, args string) { lines = append(lines, prefix+" "+args) },
		funcr.Options{LogCaller: funcr.All, Verbosity: 1})
	req := &admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
		UID: "req-1", Namespace: "shop", Name: "cache",
		UserInfo: authenticationv1.UserInfo{Username: "alice"},
	}}

	log := requestLogger(base, req).WithName("admission").WithValues("code", 400)
	if log.V(5).Enabled() || !log.V(1).Enabled() {
		t.Errorf("verbosity not the base logger's")
	}
	log.V(5).Info("received request")
	if len(lines) != 0 {
		t.Fatalf("a disabled message was written: %q", lines)
	}
	log.Info("wrote response")
	if len(lines) != 1 {
		t.Fatalf("lines = %q, want one", lines)
	}
	for _, want := range []string{`"requestID"="req-1"`, `"namespace"="shop"`, `"name"="cache"`, `"user"="alice"`,
		`"code"=400`, `admission`, `request_log_test.go`} {
		if !strings.Contains(lines[0], want) {
			t.Errorf("line %q lacks %s", lines[0], want)
		}
	}
}

func TestLazyValuesAreMadeOnlyForAMessage(t *testing.T) {
	made := 0
	sink := lazyValues{sink: funcr.New(func(string, string) {}, funcr.Options{}).GetSink(),
		values: func() []any { made++; return []any{"k", "v"} }}
	log := logr.New(nil).WithSink(sink).WithValues("a", 1).WithName("n").WithCallDepth(1)
	if made != 0 {
		t.Fatalf("values made %d times before any message", made)
	}
	log.Error(nil, "failed")
	log.Info("done")
	if made != 2 {
		t.Errorf("values made %d times for two messages, want 2", made)
	}
}

func TestRequestLoggerWithoutARequestOrSink(t *testing.T) {
	base := funcr.New(func(string, string) {}, funcr.Options{})
	if got := requestLogger(base, nil); got != base {
		t.Error("a logger without a request is not the base logger")
	}
	if got := requestLogger(logr.Discard(), &admission.Request{}); got.GetSink() != nil {
		t.Error("a discarding logger gained a sink")
	}
}
