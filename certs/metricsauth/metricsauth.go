package metricsauth

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/sync/singleflight"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	authenticationclient "k8s.io/client-go/kubernetes/typed/authentication/v1"
	authorizationclient "k8s.io/client-go/kubernetes/typed/authorization/v1"
	"k8s.io/client-go/rest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// How long answers are reused: those of controller-runtime's filter.
const (
	tokenTTL = time.Minute
	allowTTL = 5 * time.Minute
	denyTTL  = 30 * time.Second
	// reviewTimeout bounds each review, so a slow API server fails a
	// scrape instead of holding it.
	reviewTimeout = 10 * time.Second
	// maxNewTokenReviews bounds the reviews under way of tokens the API
	// server has not accepted before: anyone can send those, and without a
	// bound a flood of them would queue a scraper's review behind
	// thousands in client-go's rate limiter until it timed out. A scraper
	// or two bring a new token at most every few minutes (kubelet rotates
	// projected tokens hourly), well within 8; a flood gets 429 past them.
	maxNewTokenReviews = 8
)

// Filter is a metricsserver.Options.FilterProvider that authenticates and
// authorizes every request with the API server that config points at.
func Filter(config *rest.Config, httpClient *http.Client) (metricsserver.Filter, error) {
	authn, err := authenticationclient.NewForConfigAndClient(config, httpClient)
	if err != nil {
		return nil, fmt.Errorf("metrics authentication client: %w", err)
	}
	authz, err := authorizationclient.NewForConfigAndClient(config, httpClient)
	if err != nil {
		return nil, fmt.Errorf("metrics authorization client: %w", err)
	}
	g := newGate(authn.TokenReviews(), authz.SubjectAccessReviews(), time.Now)
	return func(log logr.Logger, next http.Handler) (http.Handler, error) {
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			g.serve(log, next, w, req)
		}), nil
	}, nil
}

// tokenReviewer and accessReviewer are the two calls the gate makes.
type tokenReviewer interface {
	Create(context.Context, *authenticationv1.TokenReview, metav1.CreateOptions) (*authenticationv1.TokenReview, error)
}

type accessReviewer interface {
	Create(context.Context, *authorizationv1.SubjectAccessReview, metav1.CreateOptions) (*authorizationv1.SubjectAccessReview, error)
}

// gate checks requests and remembers the API server's answers.
type gate struct {
	tokens tokenReviewer
	access accessReviewer
	// users holds the tokens the API server accepted, and refused those it
	// did not, apart: forged tokens, however many, push out only each
	// other, never a scraper's. An accepted token's expired entry stays
	// until its room is needed, and marks its next review as one of a
	// token known to be good, which maxNewTokenReviews does not hold back.
	users   *ttlCache[authenticationv1.UserInfo]
	refused *ttlCache[struct{}]
	// decisions are keyed by accessKey.
	decisions *ttlCache[decision]
	// newTokenReviews holds a place for each review under way of a token
	// not accepted before; it has room for maxNewTokenReviews.
	newTokenReviews chan struct{}
	// Concurrent requests that need the same review share one.
	tokenFlights, accessFlights singleflight.Group
	now                         func() time.Time
}

func newGate(tokens tokenReviewer, access accessReviewer, now func() time.Time) *gate {
	return &gate{
		tokens:          tokens,
		access:          access,
		users:           newTTLCache[authenticationv1.UserInfo](),
		refused:         newTTLCache[struct{}](),
		decisions:       newTTLCache[decision](),
		newTokenReviews: make(chan struct{}, maxNewTokenReviews),
		now:             now,
	}
}

// userInfo is who a token belongs to; authenticated is false for a token
// the API server refused.
type userInfo struct {
	authenticated bool
	user          authenticationv1.UserInfo
}

type decision struct {
	allowed bool
	reason  string
}

// errBusy refuses a token that needs a review while maxNewTokenReviews
// reviews of new tokens are under way.
var errBusy = errors.New("too many reviews of new tokens under way")

func (g *gate) serve(log logr.Logger, next http.Handler, w http.ResponseWriter, req *http.Request) {
	ctx, cancel := context.WithTimeout(req.Context(), reviewTimeout)
	defer cancel()
	token, ok := bearerToken(req)
	if !ok {
		http.Error(w, "Unauthorized", http.StatusUnauthorized)
		return
	}
	who, err := g.authenticate(ctx, token)
	if errors.Is(err, errBusy) {
		log.V(4).Info("refused a metrics request: too many new tokens to review")
		w.Header().Set("Retry-After", "1")
		http.Error(w, "Too many new tokens, try again", http.StatusTooManyRequests)
		return
	}
	if err != nil {
		log.Error(err, "reviewing the token of a metrics request")
		http.Error(w, "Authentication failed", http.StatusInternalServerError)
		return
	}
	if !who.authenticated {
		log.V(4).Info("refused a metrics request: the token is not valid")
		http.Error(w, "Unauthorized", http.StatusUnauthorized)
		return
	}
	verb, path := strings.ToLower(req.Method), req.URL.Path
	d, err := g.authorize(ctx, who.user, verb, path)
	if err != nil {
		log.Error(err, "reviewing the access of a metrics request", "user", who.user.Username)
		http.Error(w, fmt.Sprintf("Authorization for user %s failed", who.user.Username), http.StatusInternalServerError)
		return
	}
	if !d.allowed {
		log.V(4).Info("refused a metrics request", "user", who.user.Username, "verb", verb, "path", path, "reason", d.reason)
		http.Error(w, fmt.Sprintf("Authorization denied for user %s", who.user.Username), http.StatusForbidden)
		return
	}
	next.ServeHTTP(w, req)
}

// bearerToken is the request's "Authorization: Bearer" token.
func bearerToken(req *http.Request) (string, bool) {
	scheme, token, ok := strings.Cut(req.Header.Get("Authorization"), " ")
	token = strings.TrimSpace(token)
	return token, ok && strings.EqualFold(scheme, "bearer") && token != ""
}

// authenticate asks the API server who token belongs to, or remembers it.
func (g *gate) authenticate(ctx context.Context, token string) (userInfo, error) {
	key := fmt.Sprintf("%x", sha256.Sum256([]byte(token)))
	if who, fresh, _ := g.rememberedToken(key, g.now()); fresh {
		return who, nil
	}
	return shared(ctx, &g.tokenFlights, key, func(ctx context.Context) (userInfo, error) {
		// Checked again: a review that ended since the check above has
		// answered already.
		now := g.now()
		who, fresh, accepted := g.rememberedToken(key, now)
		if fresh {
			return who, nil
		}
		if !accepted {
			select {
			case g.newTokenReviews <- struct{}{}:
				defer func() { <-g.newTokenReviews }()
			default:
				return userInfo{}, errBusy
			}
		}
		review, err := g.tokens.Create(ctx, &authenticationv1.TokenReview{
			Spec: authenticationv1.TokenReviewSpec{Token: token},
		}, metav1.CreateOptions{})
		if err != nil {
			return userInfo{}, err
		}
		if !review.Status.Authenticated {
			g.users.remove(key)
			g.refused.put(key, struct{}{}, now, tokenTTL)
			return userInfo{}, nil
		}
		g.users.put(key, review.Status.User, now, tokenTTL)
		return userInfo{authenticated: true, user: review.Status.User}, nil
	})
}

// rememberedToken is what the caches say of the token with key: who it
// belongs to, whether that is fresh enough to use, and whether the API
// server accepted it before (even if that answer has expired).
func (g *gate) rememberedToken(key string, now time.Time) (who userInfo, fresh, accepted bool) {
	if user, fresh, seen := g.users.get(key, now); seen {
		return userInfo{authenticated: true, user: user}, fresh, true
	}
	_, fresh, _ = g.refused.get(key, now)
	return userInfo{}, fresh, false
}

// authorize asks the API server whether user may verb path, or remembers it.
func (g *gate) authorize(ctx context.Context, user authenticationv1.UserInfo, verb, path string) (decision, error) {
	key := accessKey(user, verb, path)
	if d, fresh, _ := g.decisions.get(key, g.now()); fresh {
		return d, nil
	}
	return shared(ctx, &g.accessFlights, key, func(ctx context.Context) (decision, error) {
		now := g.now()
		if d, fresh, _ := g.decisions.get(key, now); fresh {
			return d, nil
		}
		extra := make(map[string]authorizationv1.ExtraValue, len(user.Extra))
		for k, v := range user.Extra {
			extra[k] = authorizationv1.ExtraValue(v)
		}
		review, err := g.access.Create(ctx, &authorizationv1.SubjectAccessReview{
			Spec: authorizationv1.SubjectAccessReviewSpec{
				User:                  user.Username,
				UID:                   user.UID,
				Groups:                user.Groups,
				Extra:                 extra,
				NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: path, Verb: verb},
			},
		}, metav1.CreateOptions{})
		if err != nil {
			return decision{}, err
		}
		d := decision{allowed: review.Status.Allowed && !review.Status.Denied, reason: review.Status.Reason}
		ttl := denyTTL
		if d.allowed {
			ttl = allowTTL
		}
		g.decisions.put(key, d, now, ttl)
		return d, nil
	})
}

// shared runs review once for all the callers that ask for key while it
// is under way. The review has its own deadline, not the first caller's,
// so a caller that hangs up does not fail the others; each caller waits
// only until its own ctx is done.
func shared[T any](ctx context.Context, flights *singleflight.Group, key string, review func(context.Context) (T, error)) (T, error) {
	answer := flights.DoChan(key, func() (any, error) {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), reviewTimeout)
		defer cancel()
		return review(ctx)
	})
	select {
	case a := <-answer:
		if a.Err != nil {
			var zero T
			return zero, a.Err
		}
		return a.Val.(T), nil
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}

// accessKey identifies a question to the authorizer: everything about the
// user that a SubjectAccessReview carries, the verb and the path. Every
// string is written with its length and every list with its count, so the
// key can be read back into exactly one question: no two users, however
// their names, groups and extra are cut, share a key.
func accessKey(user authenticationv1.UserInfo, verb, path string) string {
	h := sha256.New()
	field := func(s string) {
		_, _ = fmt.Fprintf(h, "%d:%s", len(s), s)
	}
	count := func(n int) {
		_, _ = fmt.Fprintf(h, "%d;", n)
	}
	field(user.Username)
	field(user.UID)
	count(len(user.Groups))
	for _, g := range user.Groups {
		field(g)
	}
	count(len(user.Extra))
	for _, k := range slices.Sorted(maps.Keys(user.Extra)) {
		field(k)
		count(len(user.Extra[k]))
		for _, v := range user.Extra[k] {
			field(v)
		}
	}
	field(verb)
	field(path)
	return fmt.Sprintf("%x", h.Sum(nil))
}
