package metricsauth

import (
	"context"
	"crypto/sha256"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/go-logr/logr"
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
	g := &gate{
		tokens:    authn.TokenReviews(),
		access:    authz.SubjectAccessReviews(),
		users:     newTTLCache[userInfo](),
		decisions: newTTLCache[decision](),
		now:       time.Now,
	}
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
	tokens    tokenReviewer
	access    accessReviewer
	users     *ttlCache[userInfo]
	decisions *ttlCache[decision]
	now       func() time.Time
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

func (g *gate) serve(log logr.Logger, next http.Handler, w http.ResponseWriter, req *http.Request) {
	ctx, cancel := context.WithTimeout(req.Context(), reviewTimeout)
	defer cancel()
	token, ok := bearerToken(req)
	if !ok {
		http.Error(w, "Unauthorized", http.StatusUnauthorized)
		return
	}
	who, err := g.authenticate(ctx, token)
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
	now := g.now()
	if who, ok := g.users.get(key, now); ok {
		return who, nil
	}
	review, err := g.tokens.Create(ctx, &authenticationv1.TokenReview{
		Spec: authenticationv1.TokenReviewSpec{Token: token},
	}, metav1.CreateOptions{})
	if err != nil {
		return userInfo{}, err
	}
	who := userInfo{authenticated: review.Status.Authenticated, user: review.Status.User}
	g.users.put(key, who, now, tokenTTL)
	return who, nil
}

// authorize asks the API server whether user may verb path, or remembers it.
func (g *gate) authorize(ctx context.Context, user authenticationv1.UserInfo, verb, path string) (decision, error) {
	key := accessKey(user, verb, path)
	now := g.now()
	if d, ok := g.decisions.get(key, now); ok {
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
}

// accessKey identifies a question to the authorizer: everything about the
// user that a SubjectAccessReview carries, the verb and the path.
func accessKey(user authenticationv1.UserInfo, verb, path string) string {
	h := sha256.New()
	field := func(s string) {
		_, _ = fmt.Fprintf(h, "%d:%s", len(s), s)
	}
	field(user.Username)
	field(user.UID)
	for _, g := range user.Groups {
		field(g)
	}
	field("")
	for _, k := range slices.Sorted(maps.Keys(user.Extra)) {
		field(k)
		for _, v := range user.Extra[k] {
			field(v)
		}
		field("")
	}
	field(verb)
	field(path)
	return fmt.Sprintf("%x", h.Sum(nil))
}
