// Package controllers holds the Memcached reconciler.
//
// For each Memcached it owns a Deployment of memcached pods, a headless
// Service that lets clients find every pod, and a PodDisruptionBudget while
// there are two pods or more. The desired objects are pure functions of the
// Memcached and the operator's [Options] (deployment.go, service.go, pdb.go);
// status is a pure function of the Memcached, its Deployment and its pods
// (status.go). The reconciler (memcached_controller.go) compares and writes:
// it applies an object with server-side apply only when the fields it owns
// differ from the desired ones, so a resync where nothing changed makes no
// API write, and fields that others own (API defaults, a rollout-restart
// annotation, a hand-added label) are left alone. Reading the owned fields
// back is the costly part of that comparison; owned_fields.go remembers one
// that found them equal until the operator's managed-fields entry changes.
//
// The manager's caches hold only objects that carry the operator's
// managed-by label, cut down to what the reconciler reads; see
// [CacheOptions].
package controllers
