package metricsauth

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/go-logr/logr"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The API server's answers are faked here to test the gate's own logic:
// status codes, what it asks and what it remembers. test/security runs the
// filter against a real kube-apiserver and RBAC.

type fakeTokens struct {
	users map[string]string // token -> user
	err   error
	calls int
}

func (f *fakeTokens) Create(_ context.Context, r *authenticationv1.TokenReview, _ metav1.CreateOptions) (*authenticationv1.TokenReview, error) {
	f.calls++
	if f.err != nil {
		return nil, f.err
	}
	out := r.DeepCopy()
	if u, ok := f.users[r.Spec.Token]; ok {
		out.Status = authenticationv1.TokenReviewStatus{Authenticated: true,
			User: authenticationv1.UserInfo{Username: u, Groups: []string{"system:authenticated"}}}
	}
	return out, nil
}

type fakeAccess struct {
	allowed map[string]bool // user -> may get /metrics
	calls   int
	last    authorizationv1.SubjectAccessReviewSpec
}

func (f *fakeAccess) Create(_ context.Context, r *authorizationv1.SubjectAccessReview, _ metav1.CreateOptions) (*authorizationv1.SubjectAccessReview, error) {
	f.calls++
	f.last = r.Spec
	out := r.DeepCopy()
	a := r.Spec.NonResourceAttributes
	out.Status.Allowed = f.allowed[r.Spec.User] && a != nil && a.Path == "/metrics" && a.Verb == "get"
	return out, nil
}

func newGate(tokens *fakeTokens, access *fakeAccess, now *time.Time) *gate {
	return &gate{tokens: tokens, access: access, users: newTTLCache[userInfo](), decisions: newTTLCache[decision](),
		now: func() time.Time { return *now }}
}

func scrape(g *gate, method, authorization string) int {
	req := httptest.NewRequest(method, "/metrics", nil)
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	rec := httptest.NewRecorder()
	g.serve(logr.Discard(), http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }), rec, req)
	return rec.Code
}

func TestStatusCodes(t *testing.T) {
	tests := []struct {
		name, method, authorization string
		tokenErr                    error
		want                        int
	}{
		{name: "reader", method: http.MethodGet, authorization: "Bearer reader-token", want: http.StatusOK},
		{name: "scheme in lower case", method: http.MethodGet, authorization: "bearer reader-token", want: http.StatusOK},
		{name: "no header", method: http.MethodGet, want: http.StatusUnauthorized},
		{name: "basic auth", method: http.MethodGet, authorization: "Basic cmVhZGVyOng=", want: http.StatusUnauthorized},
		{name: "empty token", method: http.MethodGet, authorization: "Bearer ", want: http.StatusUnauthorized},
		{name: "forged token", method: http.MethodGet, authorization: "Bearer forged", want: http.StatusUnauthorized},
		{name: "authenticated, not allowed", method: http.MethodGet, authorization: "Bearer stranger-token", want: http.StatusForbidden},
		{name: "reader, but a verb the role lacks", method: http.MethodPost, authorization: "Bearer reader-token", want: http.StatusForbidden},
		{name: "the review fails", method: http.MethodGet, authorization: "Bearer reader-token", tokenErr: errors.New("down"),
			want: http.StatusInternalServerError},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			now := time.Unix(0, 0)
			g := newGate(&fakeTokens{users: map[string]string{"reader-token": "reader", "stranger-token": "stranger"}, err: tt.tokenErr},
				&fakeAccess{allowed: map[string]bool{"reader": true}}, &now)
			if got := scrape(g, tt.method, tt.authorization); got != tt.want {
				t.Errorf("status %d, want %d", got, tt.want)
			}
		})
	}
}

func TestAnswersAreRememberedForTheirTTL(t *testing.T) {
	now := time.Unix(0, 0)
	tokens := &fakeTokens{users: map[string]string{"reader-token": "reader", "stranger-token": "stranger"}}
	access := &fakeAccess{allowed: map[string]bool{"reader": true}}
	g := newGate(tokens, access, &now)

	for range 3 {
		if got := scrape(g, http.MethodGet, "Bearer reader-token"); got != http.StatusOK {
			t.Fatalf("status %d", got)
		}
	}
	if tokens.calls != 1 || access.calls != 1 {
		t.Fatalf("three scrapes made %d token and %d access reviews, want 1 and 1", tokens.calls, access.calls)
	}
	if a := access.last; a.User != "reader" || len(a.Groups) != 1 || a.NonResourceAttributes == nil {
		t.Errorf("access review of %+v", a)
	}

	// The token's review expires first; the decision is still remembered.
	now = now.Add(tokenTTL)
	scrape(g, http.MethodGet, "Bearer reader-token")
	if tokens.calls != 2 || access.calls != 1 {
		t.Errorf("after %s: %d token and %d access reviews, want 2 and 1", tokenTTL, tokens.calls, access.calls)
	}
	now = now.Add(allowTTL)
	scrape(g, http.MethodGet, "Bearer reader-token")
	if access.calls != 2 {
		t.Errorf("after %s: %d access reviews, want 2", allowTTL, access.calls)
	}

	// A denial is remembered for less time than an allowance.
	scrape(g, http.MethodGet, "Bearer stranger-token")
	scrape(g, http.MethodGet, "Bearer stranger-token")
	if access.calls != 3 {
		t.Fatalf("%d access reviews, want 3", access.calls)
	}
	now = now.Add(denyTTL)
	access.allowed["stranger"] = true
	if got := scrape(g, http.MethodGet, "Bearer stranger-token"); got != http.StatusOK {
		t.Errorf("a binding made after a denial is not seen %s later: status %d", denyTTL, got)
	}
}

func TestCacheIsBounded(t *testing.T) {
	now := time.Unix(0, 0)
	tokens := &fakeTokens{}
	g := newGate(tokens, &fakeAccess{}, &now)
	for i := range 3 * maxEntries {
		scrape(g, http.MethodGet, "Bearer forged-"+strconv.Itoa(i))
	}
	if n := len(g.users.entries); n > maxEntries {
		t.Errorf("%d remembered tokens, want at most %d", n, maxEntries)
	}
	if tokens.calls != 3*maxEntries {
		t.Errorf("%d token reviews for %d different tokens", tokens.calls, 3*maxEntries)
	}
}

func TestAccessKeyTellsUsersApart(t *testing.T) {
	base := authenticationv1.UserInfo{Username: "a", Groups: []string{"g1", "g2"}, Extra: map[string]authenticationv1.ExtraValue{"k": {"v"}}}
	variants := map[string]authenticationv1.UserInfo{
		"name":          {Username: "b", Groups: base.Groups, Extra: base.Extra},
		"groups joined": {Username: "a", Groups: []string{"g1g2"}, Extra: base.Extra},
		"a group less":  {Username: "a", Groups: []string{"g1"}, Extra: base.Extra},
		"extra":         {Username: "a", Groups: base.Groups, Extra: map[string]authenticationv1.ExtraValue{"k": {"w"}}},
		"group as name": {Username: "ag1", Groups: []string{"g2"}, Extra: base.Extra},
	}
	want := accessKey(base, "get", "/metrics")
	for name, u := range variants {
		if accessKey(u, "get", "/metrics") == want {
			t.Errorf("%s: same key as the base user", name)
		}
	}
	if accessKey(base, "post", "/metrics") == want || accessKey(base, "get", "/metricsx") == want {
		t.Error("verb or path not in the key")
	}
}
