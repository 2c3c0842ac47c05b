// Package webhooks holds the admission webhooks for Memcached.
//
// The rules live in plain values and functions, and the admission adapters
// are thin: they decode, call the rules, and answer
// with an Invalid (422) status that carries the field paths, as the API
// server's own validation does:
//
//	Memcached.cache.example.com "x" is invalid: spec.size: Invalid value: 40: must be no more than 16
//
// The rules:
//   - [SizePolicy], the administrator's rule for spec.size, built from the
//     operator's --default-size, --min-size and --max-size flags, and the
//     name rule (the name is also the Service's);
//   - [DefaultSpec], what the mutating webhook adds beside the size, the
//     resources derived from the memory and the default spread, so that the
//     stored object shows what runs (the CRD schema defaults the rest);
//   - the pod spec's rules for the resources and placement copied into the
//     Deployment, checked at admission with the Memcached's field paths
//     rather than later on the Deployment;
//   - the warning for an update that replaces the pods.
//
// memcached's own start-up rules are in controllers/operand, shared with the
// reconciler that builds the command line; the fixed ones are also CEL rules
// in the CRD, so they hold where the webhooks do not run.
//
// Use it from main:
//
//	policy := webhooks.DefaultSizePolicy() // then overridden by flags
//	if err := policy.Validate(); err != nil { ... exit ... }
//	if err := webhooks.SetupWithManager(mgr, policy); err != nil { ... }
//
// Four webhooks are served, configured by the markers beside the adapters
// (config/webhook/manifests.yaml is generated from them):
//   - mmemcached-v1.kb.io, mutating, on create and update of memcacheds; it
//     lets a Memcached it cannot decode (a string for spec.size) pass
//     unchanged, so that the schema refuses it with a 422 and the field path;
//   - vmemcached-v1.kb.io, validating, on create and update of memcacheds;
//   - mmemcachedscale-v1.kb.io and vmemcachedscale-v1.kb.io, on updates of
//     memcacheds/scale, so that kubectl scale and autoscalers also stay
//     within the size policy, with the same messages.
//
// An update is checked only for what it changes (see
// memcachedValidator.ValidateUpdate), so a Memcached created under a looser
// policy can still be labelled, have its status written or be deleted.
package webhooks
