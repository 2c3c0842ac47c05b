package e2e

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
)

// rbacDenial matches the API server's message for a request RBAC refused.
var rbacDenial = regexp.MustCompile(`cannot (get|list|watch|create|update|patch|delete) resource`)

// logProblems returns what is wrong with one operator log: the proxy
// credentials in it, an RBAC refusal, or no sign that the operator read
// the proxy at all (the redacted line), which would make the first check
// vacuous.
func logProblems(p proxySettings, data []byte) []string {
	var out []string
	if leak := p.leakIn(data); leak != "" {
		out = append(out, fmt.Sprintf("holds the proxy credentials: ...%s...", leak))
	}
	if m := rbacDenial.Find(data); m != nil {
		out = append(out, fmt.Sprintf("shows the generated RBAC refused the operator: %q", m))
	}
	if !bytes.Contains(data, []byte("propagating proxy variable")) || !bytes.Contains(data, []byte("REDACTED")) {
		out = append(out, "does not log the redacted proxy variables: did the operator read them?")
	}
	return out
}

// checkOperatorLogs runs logProblems over the log of every operator the
// suite started.
func checkOperatorLogs() error {
	operatorLogs.Lock()
	defer operatorLogs.Unlock()
	if len(operatorLogs.paths) == 0 {
		return errors.New("no operator log to check")
	}
	var errs []error
	for _, path := range operatorLogs.paths {
		data, err := os.ReadFile(path)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, problem := range logProblems(proxy, data) {
			errs = append(errs, fmt.Errorf("%s %s", path, problem))
		}
	}
	return errors.Join(errs...)
}

// TestLogProblems proves the log check finds what it looks for, in the
// forms it would take in the operator's JSON log.
func TestLogProblems(t *testing.T) {
	p := newProxySettings("pw0123456789abcdef")
	const redacted = `{"msg":"propagating proxy variable to memcached containers","name":"HTTP_PROXY","value":"http://REDACTED@proxy.invalid:3128"}` + "\n"
	tests := []struct {
		name string
		log  string
		want []string
	}{
		{"redacted only", redacted, nil},
		{"the password", redacted + `{"msg":"applying","env":"http://proxyuser:pw0123456789abcdef@proxy.invalid:3128"}`,
			[]string{"holds the proxy credentials"}},
		{"a Proxy-Authorization header", redacted + `{"header":"Basic cHJveHl1c2VyOnB3MDEyMzQ1Njc4OWFiY2RlZg=="}`,
			[]string{"holds the proxy credentials"}},
		{"an RBAC refusal", redacted + `{"error":"memcacheds.cache.example.com is forbidden: User \"system:serviceaccount:ns:sa\" cannot list resource \"memcacheds\" in API group \"cache.example.com\" at the cluster scope"}`,
			[]string{"RBAC refused"}},
		{"a quota refusal is no RBAC refusal", redacted + `{"error":"deployments.apps \"x\" is forbidden: exceeded quota: no-deployments"}`, nil},
		{"no sign the proxy was read", `{"msg":"starting manager"}`, []string{"does not log the redacted proxy"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := logProblems(p, []byte(tt.log))
			if len(got) != len(tt.want) {
				t.Fatalf("logProblems = %q, want %d problems like %q", got, len(tt.want), tt.want)
			}
			for i := range tt.want {
				if !strings.Contains(got[i], tt.want[i]) {
					t.Errorf("problem %d = %q, want it to say %q", i, got[i], tt.want[i])
				}
			}
		})
	}
}
