// Package metricsauth lets through to the metrics endpoint only the callers
// the API server vouches for: their bearer token passes a TokenReview, and a
// SubjectAccessReview allows them to get the path they asked for
// (nonResourceURLs "/metrics", verb get, as config/rbac's metrics reader
// role grants). Anything else gets 401 or 403 and never reaches the metrics.
//
// controller-runtime's filters.WithAuthenticationAndAuthorization does the
// same through k8s.io/apiserver's delegating authenticator and authorizer,
// and brings that module, gRPC and OpenTelemetry into the manager, whose
// binary's pages are a large part of its resident memory. This package
// makes the same two reviews with client-go's
// typed clients and caches their answers as that filter does: a token's
// review for a minute, an allowed decision for five, a denial for 30 s, so
// a scraper costs the API server a review every few minutes, not one per
// scrape. The caches are bounded, so forged tokens cannot grow them.
//
//	metricsOpts.FilterProvider = metricsauth.Filter
//
// Tokens are never logged, and are kept only as their SHA-256.
package metricsauth
