// Package admissionlimit bounds what the webhook server takes in: the size
// of a request body, and the number of admission calls it works on at once.
//
// Whoever reaches the webhook port can post a review, not only the API
// server. controller-runtime reads up to 7 MiB of each and decodes it; a
// few at a time, each decoded into a multiple of its size, exhaust the
// manager's memory limit, and with failurePolicy Fail every Memcached write
// in the cluster is refused until the pod is back. Wrapped in a
// [WebhookServer], every webhook's handler:
//
//   - refuses a body over [Options.MaxBodyBytes] with 413 before anything
//     decodes it: unread when its Content-Length says so, and after that
//     many bytes when it does not say (chunked);
//   - reads and handles at most [Options.MaxInFlight] small calls (a
//     Content-Length up to [Options.SmallBodyBytes], as the API server's
//     calls for real objects are) and [Options.MaxLargeInFlight] others at
//     once, so that the memory a flood can take is bounded by the slots
//     times the body bound, and a flood of large bodies leaves the small
//     lane to the API server's calls;
//   - answers 408 when a body has not arrived within [Options.ReadTimeout],
//     so that a slow client cannot keep a slot.
//
// A call that finds every slot of its lane taken waits up to
// [Options.QueueWait] for one, then is answered 429 with Retry-After: the
// API server's webhook client retries such an answer, within the
// webhook's timeoutSeconds, as it does for its own priority and fairness.
//
// Wrap the server last, around drain.WebhookServer: a handler registered
// on the outer wrapper runs inside the inner one's, so that a 413 or 429
// also closes its connection once the pod is draining.
//
//	srv := admissionlimit.NewWebhookServer(drain.WebhookServer{Drain: d, Server: webhook.NewServer(opts)}, admissionlimit.Options{})
package admissionlimit
