// Package webhooks holds the admission webhooks for Memcached.
//
// The rules live in [SizePolicy], a plain value built from the operator's
// --default-size, --min-size and --max-size flags: [SizePolicy.DefaultMemcached] fills
// in an omitted spec.size, [SizePolicy.ValidateMemcached] returns
// field.ErrorList for a size outside [Min, Max] or a name that cannot name
// the Memcached's Service and labels, and [SizePolicy.Warnings] advises
// against a single pod. The admission adapters in memcached_webhook.go are
// thin: they decode with controller-runtime's typed webhooks, call the
// policy, and answer with an Invalid (422) status that carries the field
// paths, as the API server's own validation does:
//
//	Memcached.cache.example.com "x" is invalid: spec.size: Invalid value: 40: must be no more than 16
//
// Use it from main:
//
//	policy := webhooks.DefaultSizePolicy() // then overridden by flags
//	if err := policy.Validate(); err != nil { ... exit ... }
//	if err := webhooks.SetupWithManager(mgr, policy); err != nil { ... }
//
// Three webhooks are served, configured by the markers in
// memcached_webhook.go (config/webhook/manifests.yaml is generated from
// them):
//   - mmemcached-v1.kb.io, mutating, on create and update of memcacheds;
//   - vmemcached-v1.kb.io, validating, on create and update of memcacheds;
//   - vmemcachedscale-v1.kb.io, validating, on updates of memcacheds/scale,
//     so that kubectl scale and autoscalers also stay within [Min, Max].
//
// An update is checked only for what it changes (see
// memcachedValidator.ValidateUpdate), so a Memcached created under a looser
// policy can still be labelled, have its status written or be deleted.
package webhooks
