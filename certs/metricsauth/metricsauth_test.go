package metricsauth

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	. "github.com/onsi/gomega"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The API server's answers are faked here to test the gate's own logic:
// status codes, what it asks, what it remembers and how it shares and
// bounds reviews. test/e2e runs the filter against a real
// kube-apiserver and RBAC.

// reviewCounter counts reviews by subject, and those under way at once.
type reviewCounter struct {
	mu                    sync.Mutex
	calls                 map[string]int
	underWay, maxUnderWay int
}

// begin counts a review of subject under way until the returned end.
func (c *reviewCounter) begin(subject string) (end func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.calls == nil {
		c.calls = map[string]int{}
	}
	c.calls[subject]++
	c.underWay++
	c.maxUnderWay = max(c.maxUnderWay, c.underWay)
	return func() { c.mu.Lock(); c.underWay--; c.mu.Unlock() }
}

// of is the number of reviews of subject; "" counts them all.
func (c *reviewCounter) of(subject string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if subject != "" {
		return c.calls[subject]
	}
	n := 0
	for _, k := range c.calls {
		n += k
	}
	return n
}

func (c *reviewCounter) underWayNow() (underWay, maxUnderWay int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.underWay, c.maxUnderWay
}

// held makes the reviews of the subjects hold picks wait until release is
// closed, as a slow or flooded API server would.
type held struct {
	hold    func(subject string) bool
	release chan struct{}
}

func (h held) wait(subject string) {
	if h.hold != nil && h.hold(subject) {
		<-h.release
	}
}

type fakeTokens struct {
	users map[string]string // token -> user
	err   error
	held
	reviewCounter
}

func (f *fakeTokens) Create(_ context.Context, r *authenticationv1.TokenReview, _ metav1.CreateOptions) (*authenticationv1.TokenReview, error) {
	defer f.begin(r.Spec.Token)()
	f.wait(r.Spec.Token)
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
	// status, when set, is the answer to every review.
	status *authorizationv1.SubjectAccessReviewStatus
	err    error
	held
	reviewCounter
	lastMu sync.Mutex
	last   authorizationv1.SubjectAccessReviewSpec
}

func (f *fakeAccess) Create(_ context.Context, r *authorizationv1.SubjectAccessReview, _ metav1.CreateOptions) (*authorizationv1.SubjectAccessReview, error) {
	defer f.begin(r.Spec.User)()
	f.wait(r.Spec.User)
	f.lastMu.Lock()
	f.last = r.Spec
	f.lastMu.Unlock()
	if f.err != nil {
		return nil, f.err
	}
	out := r.DeepCopy()
	if f.status != nil {
		out.Status = *f.status
		return out, nil
	}
	a := r.Spec.NonResourceAttributes
	out.Status.Allowed = f.allowed[r.Spec.User] && a != nil && a.Path == "/metrics" && a.Verb == "get"
	return out, nil
}

// clock is the gate's time, moved by the test while requests run.
type clock struct{ t atomic.Int64 }

func (c *clock) now() time.Time      { return time.Unix(0, c.t.Load()) }
func (c *clock) add(d time.Duration) { c.t.Add(int64(d)) }
func newTestGate(tokens *fakeTokens, access *fakeAccess) (*gate, *clock) {
	c := &clock{}
	return newGate(tokens, access, c.now), c
}

func readerTokens() *fakeTokens {
	return &fakeTokens{users: map[string]string{"reader-token": "reader", "stranger-token": "stranger"}}
}

func readerAccess() *fakeAccess { return &fakeAccess{allowed: map[string]bool{"reader": true}} }

// get scrapes with token as a GET does and says what came back.
func get(g *gate, token string) int {
	code, _ := scrape(g, http.MethodGet, "Bearer "+token)
	return code
}

// scrape sends one request through the gate and says what came back and
// whether it reached the metrics handler.
func scrape(g *gate, method, authorization string) (code int, reached bool) {
	req := httptest.NewRequest(method, "/metrics", nil)
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	rec := httptest.NewRecorder()
	g.serve(logr.Discard(), http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		reached = true
		w.WriteHeader(http.StatusOK)
	}), rec, req)
	return rec.Code, reached
}

func TestStatusCodes(t *testing.T) {
	allowedAndDenied := &authorizationv1.SubjectAccessReviewStatus{Allowed: true, Denied: true}
	denied := &authorizationv1.SubjectAccessReviewStatus{Denied: true, Reason: "a deny rule"}
	tests := []struct {
		// method is GET unless set.
		name, method, authorization string
		tokenErr, accessErr         error
		accessStatus                *authorizationv1.SubjectAccessReviewStatus
		want                        int
	}{
		{name: "reader", authorization: "Bearer reader-token", want: http.StatusOK},
		{name: "scheme in lower case", authorization: "bearer reader-token", want: http.StatusOK},
		{name: "no header", want: http.StatusUnauthorized},
		{name: "basic auth", authorization: "Basic cmVhZGVyOng=", want: http.StatusUnauthorized},
		{name: "empty token", authorization: "Bearer ", want: http.StatusUnauthorized},
		{name: "forged token", authorization: "Bearer forged", want: http.StatusUnauthorized},
		{name: "authenticated, not allowed", authorization: "Bearer stranger-token", want: http.StatusForbidden},
		{name: "reader, but a verb the role lacks", method: http.MethodPost, authorization: "Bearer reader-token", want: http.StatusForbidden},
		{name: "the token review fails", authorization: "Bearer reader-token", tokenErr: errors.New("down"), want: http.StatusInternalServerError},
		{name: "the access review fails", authorization: "Bearer reader-token", accessErr: errors.New("down"), want: http.StatusInternalServerError},
		{name: "the access review denies and allows", authorization: "Bearer reader-token", accessStatus: allowedAndDenied, want: http.StatusForbidden},
		{name: "the access review denies", authorization: "Bearer reader-token", accessStatus: denied, want: http.StatusForbidden},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.method == "" {
				tt.method = http.MethodGet
			}
			tokens := readerTokens()
			tokens.err = tt.tokenErr
			access := readerAccess()
			access.err, access.status = tt.accessErr, tt.accessStatus
			g, _ := newTestGate(tokens, access)
			got, reached := scrape(g, tt.method, tt.authorization)
			if got != tt.want {
				t.Errorf("status %d, want %d", got, tt.want)
			}
			if reached != (tt.want == http.StatusOK) {
				t.Errorf("reached the metrics: %v", reached)
			}
		})
	}
}

func TestAnswersAreRememberedForTheirTTL(t *testing.T) {
	tokens, access := readerTokens(), readerAccess()
	g, clock := newTestGate(tokens, access)

	for range 3 {
		if got := get(g, "reader-token"); got != http.StatusOK {
			t.Fatalf("status %d", got)
		}
	}
	if tokens.of("") != 1 || access.of("") != 1 {
		t.Fatalf("three scrapes made %d token and %d access reviews, want 1 and 1", tokens.of(""), access.of(""))
	}
	if a := access.last; a.User != "reader" || len(a.Groups) != 1 || a.NonResourceAttributes == nil {
		t.Errorf("access review of %+v", a)
	}

	// The token's review expires first; the decision is still remembered.
	clock.add(tokenTTL)
	get(g, "reader-token")
	if tokens.of("") != 2 || access.of("") != 1 {
		t.Errorf("after %s: %d token and %d access reviews, want 2 and 1", tokenTTL, tokens.of(""), access.of(""))
	}
	clock.add(allowTTL)
	get(g, "reader-token")
	if access.of("") != 2 {
		t.Errorf("after %s: %d access reviews, want 2", allowTTL, access.of(""))
	}

	// A denial is remembered for less time than an allowance.
	get(g, "stranger-token")
	get(g, "stranger-token")
	if access.of("") != 3 {
		t.Fatalf("%d access reviews, want 3", access.of(""))
	}
	clock.add(denyTTL)
	access.allowed["stranger"] = true
	if got := get(g, "stranger-token"); got != http.StatusOK {
		t.Errorf("a binding made after a denial is not seen %s later: status %d", denyTTL, got)
	}

	// A token refused once is refused from memory until its TTL is out.
	get(g, "forged")
	get(g, "forged")
	if n := tokens.of("forged"); n != 1 {
		t.Errorf("two requests with one forged token made %d reviews, want 1", n)
	}

	// A token the API server stops accepting is refused once its answer
	// expires, and from then on remembered as refused.
	clock.add(tokenTTL)
	delete(tokens.users, "reader-token")
	before := tokens.of("reader-token")
	for range 2 {
		if got := get(g, "reader-token"); got != http.StatusUnauthorized {
			t.Errorf("a revoked token: status %d, want 401", got)
		}
	}
	if n := tokens.of("reader-token") - before; n != 1 {
		t.Errorf("two requests with a revoked token made %d reviews, want 1", n)
	}
}

// Forged tokens, however many, are remembered apart from accepted ones
// and cannot push a scraper's token out.
func TestCacheIsBounded(t *testing.T) {
	tokens := readerTokens()
	g, _ := newTestGate(tokens, readerAccess())
	get(g, "reader-token")
	for i := range 3 * maxEntries {
		get(g, "forged-"+strconv.Itoa(i))
	}
	if n := len(g.refused.entries); n > maxEntries {
		t.Errorf("%d remembered tokens, want at most %d", n, maxEntries)
	}
	if n := tokens.of(""); n != 3*maxEntries+1 {
		t.Errorf("%d token reviews for %d different tokens", n, 3*maxEntries+1)
	}
	if got := get(g, "reader-token"); got != http.StatusOK || tokens.of("reader-token") != 1 {
		t.Errorf("after the flood the reader got %d and made %d reviews, want 200 from the one it made before",
			got, tokens.of("reader-token"))
	}
}

// A full cache makes room by dropping what expired, then the one entry
// used least recently: never everything, never an entry in steady use.
func TestTTLCacheEviction(t *testing.T) {
	now := time.Unix(0, 0)
	c := newTTLCache[int]()
	c.put("in use", -1, now, time.Hour)
	c.put("short", -2, now, time.Second)
	for i := range maxEntries - 2 {
		c.put(strconv.Itoa(i), i, now, time.Hour)
		if _, fresh, _ := c.get("in use", now); !fresh {
			t.Fatalf("lost the entry in use after %d puts", i)
		}
	}
	// Looking keys up in the map, not with get, leaves the use order as it is.
	has := func(key string) bool { _, ok := c.entries[key]; return ok }
	now = now.Add(time.Second)
	c.put("new", 0, now, time.Hour)
	if has("short") {
		t.Error("kept an expired entry and dropped a fresh one")
	}
	if !has("0") {
		t.Error("dropped the oldest fresh entry while an expired one could go")
	}
	c.put("newer", 0, now, time.Hour)
	if has("0") {
		t.Error("kept the entry used least recently")
	}
	for _, key := range []string{"in use", "1", "new", "newer"} {
		if !has(key) {
			t.Errorf("lost %q", key)
		}
	}
	if len(c.entries) != maxEntries || c.recent.Len() != maxEntries {
		t.Errorf("%d entries, %d in use order, want %d", len(c.entries), c.recent.Len(), maxEntries)
	}
}

// A flood of forged tokens sent at once neither fails a scraper nor holds
// its review back: a cached token is answered from memory, and a known
// token whose answer expired is reviewed past the flood's reviews, which
// are bounded.
func TestForgedTokenFloodLeavesScraperAlone(t *testing.T) {
	g := NewWithT(t)
	tokens, access := readerTokens(), readerAccess()
	tokens.held = held{hold: func(token string) bool { return token != "reader-token" }, release: make(chan struct{})}
	gate, clock := newTestGate(tokens, access)
	g.Expect(get(gate, "reader-token")).To(Equal(http.StatusOK))

	const flood = 4 * maxEntries
	codes := make(chan int, flood)
	var wg sync.WaitGroup
	for i := range flood {
		wg.Go(func() { codes <- get(gate, "forged-"+strconv.Itoa(i)) })
	}
	// The API server holds the flood's reviews: as many as the gate lets
	// through are under way, and the rest of the flood has been turned away.
	g.Eventually(func() int { return len(codes) }).
		WithTimeout(30 * time.Second).Should(Equal(flood - maxNewTokenReviews))
	underWay, _ := tokens.underWayNow()
	g.Expect(underWay).To(Equal(maxNewTokenReviews))

	g.Expect(get(gate, "reader-token")).To(Equal(http.StatusOK))
	g.Expect(tokens.of("reader-token")).To(Equal(1), "the cached scraper was reviewed again")
	clock.add(tokenTTL)
	g.Expect(get(gate, "reader-token")).To(Equal(http.StatusOK),
		"the scraper's expired token was held back by the flood")
	g.Expect(tokens.of("reader-token")).To(Equal(2))

	close(tokens.release)
	wg.Wait()
	close(codes)
	got := map[int]int{}
	for code := range codes {
		got[code]++
	}
	g.Expect(got).To(HaveKeyWithValue(http.StatusUnauthorized, maxNewTokenReviews))
	g.Expect(got).To(HaveKeyWithValue(http.StatusTooManyRequests, flood-maxNewTokenReviews))
	_, maxUnderWay := tokens.underWayNow()
	// The flood's reviews, and the scraper's past them.
	g.Expect(maxUnderWay).To(Equal(maxNewTokenReviews + 1))

	g.Expect(get(gate, "reader-token")).To(Equal(http.StatusOK))
	g.Expect(tokens.of("reader-token")).To(Equal(2), "the flood pushed the scraper's token out")
	g.Expect(access.of("")).To(Equal(1))
}

// Concurrent scrapes with a token the gate has not seen make one token
// review and one access review between them.
func TestConcurrentScrapesShareReviews(t *testing.T) {
	g := NewWithT(t)
	holdAll := func(string) bool { return true }
	tokens, access := readerTokens(), readerAccess()
	tokens.held = held{hold: holdAll, release: make(chan struct{})}
	access.held = held{hold: holdAll, release: make(chan struct{})}
	gate, _ := newTestGate(tokens, access)

	const scrapers = 50
	start := make(chan struct{})
	codes := make(chan int, scrapers)
	var wg sync.WaitGroup
	for range scrapers {
		wg.Go(func() {
			<-start
			codes <- get(gate, "reader-token")
		})
	}
	close(start)
	g.Eventually(func() int { return tokens.of("") }).Should(BeNumerically(">=", 1))
	close(tokens.release)
	g.Eventually(func() int { return access.of("") }).Should(BeNumerically(">=", 1))
	close(access.release)
	wg.Wait()
	close(codes)
	g.Expect(tokens.of("")).To(Equal(1), "token reviews")
	g.Expect(access.of("")).To(Equal(1), "access reviews")
	for code := range codes {
		g.Expect(code).To(Equal(http.StatusOK))
	}
}

func TestAccessKeyTellsUsersApart(t *testing.T) {
	base := authenticationv1.UserInfo{Username: "a", Groups: []string{"g1", "g2"}, Extra: map[string]authenticationv1.ExtraValue{"k": {"v"}}}
	pairs := map[string][2]authenticationv1.UserInfo{
		"name":          {base, {Username: "b", Groups: base.Groups, Extra: base.Extra}},
		"groups joined": {base, {Username: "a", Groups: []string{"g1g2"}, Extra: base.Extra}},
		"a group less":  {base, {Username: "a", Groups: []string{"g1"}, Extra: base.Extra}},
		"extra":         {base, {Username: "a", Groups: base.Groups, Extra: map[string]authenticationv1.ExtraValue{"k": {"w"}}}},
		"group as name": {base, {Username: "ag1", Groups: []string{"g2"}, Extra: base.Extra}},
		"empty group or an extra key": {
			{Username: "a", Groups: []string{"g", "", "x"}},
			{Username: "a", Groups: []string{"g"}, Extra: map[string]authenticationv1.ExtraValue{"x": {}}},
		},
		"extra value or extra key": {
			{Username: "a", Extra: map[string]authenticationv1.ExtraValue{"k": {"v", "", "l"}}},
			{Username: "a", Extra: map[string]authenticationv1.ExtraValue{"k": {"v"}, "l": {}}},
		},
		"last group or first extra key": {
			{Username: "a", Groups: []string{"g", "k"}},
			{Username: "a", Groups: []string{"g"}, Extra: map[string]authenticationv1.ExtraValue{"k": nil}},
		},
		"group count as a name": {
			{Username: "a", UID: "1;", Groups: nil},
			{Username: "a", UID: "", Groups: []string{""}},
		},
	}
	for name, p := range pairs {
		if accessKey(p[0], "get", "/metrics") == accessKey(p[1], "get", "/metrics") {
			t.Errorf("%s: %+v and %+v share a key", name, p[0], p[1])
		}
	}
	want := accessKey(base, "get", "/metrics")
	if accessKey(base, "post", "/metrics") == want || accessKey(base, "get", "/metricsx") == want {
		t.Error("verb or path not in the key")
	}
}
