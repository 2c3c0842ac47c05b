// Package metricsauth lets through to the metrics endpoint only the callers
// the API server vouches for: their bearer token passes a TokenReview, and a
// SubjectAccessReview allows them to get the path they asked for
// (nonResourceURLs "/metrics", verb get, as config/rbac's metrics reader
// role grants). Anything else gets 401 or 403 (429 under a flood, below;
// 500 when a review fails) and never reaches the metrics.
//
// controller-runtime's filters.WithAuthenticationAndAuthorization does the
// same through k8s.io/apiserver's delegating authenticator and authorizer,
// and brings that module, gRPC and OpenTelemetry into the manager, whose
// binary's pages are a large part of its resident memory. This package
// makes the same two reviews with client-go's
// typed clients and caches their answers as that filter does: a token's
// review for a minute, an allowed decision for five, a denial for 30 s, so
// a scraper costs the API server a review every few minutes, not one per
// scrape. Requests that need the same review at the same time share it.
//
// Anyone who reaches the port can send tokens, so a flood of forged ones
// must not lock a scraper out:
//
//   - The caches are bounded, and make room by dropping what expired, then
//     the entry used least recently. Tokens the API server refused are
//     remembered apart from those it accepted, so they never push a
//     scraper's token out.
//   - At most eight reviews of tokens the API server has not accepted
//     before are under way at once; a request that would need another gets
//     429 at once instead of queueing. A token accepted before whose answer
//     has expired is reviewed past that bound, so a scraper is not held
//     back while its review is renewed. A scraper that brings a new token
//     during a flood may get 429 until the flood ends.
//
// Use it as the metrics server's filter:
//
//	metricsOpts.FilterProvider = metricsauth.Filter
//
// Tokens are never logged, and are kept only as their SHA-256.
package metricsauth
