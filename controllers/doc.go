// Package controllers holds the Memcached reconciler and what only it uses.
//
// For each Memcached it owns a Deployment of memcached pods, a headless
// Service that lets clients find every pod, and a PodDisruptionBudget while
// there are two pods or more. The desired objects are pure functions of the
// Memcached and the operator's [Options] ([DesiredObjects]); status is a pure
// function of the Memcached, its Deployment and its pods. The reconciler
// compares and writes: it applies an object with server-side apply only when
// the fields it owns differ from the desired ones, so a resync where nothing
// changed makes no API write, and fields that others own (API defaults, a
// rollout-restart annotation, a hand-added label) are left alone. Reading
// the owned fields back is the costly part of that comparison, so a
// comparison that found them equal is remembered until the operator's
// managed-fields entry changes. A Memcached that only a user's change can
// unblock (an object of its name that is someone else's, a size outside the
// policy) is reported, not retried.
//
// The manager's caches hold only objects that carry the operator's
// managed-by label, cut down to what the reconciler reads; see
// [CacheOptions].
//
// Beside it: package operand describes the memcached the operator runs (its
// command line, resources and placement, shared with the webhooks), and
// package proxyenv carries the cluster's proxy into memcached's containers.
package controllers
