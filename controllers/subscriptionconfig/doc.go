// Package subscriptionconfig gives the operator, under OLM, the environment
// its Subscription configures from its first pod on.
//
// A Subscription's spec.config.env (RELATED_IMAGE_MEMCACHED, the size
// policy's MEMCACHED_*_SIZE, a proxy) is how a cluster admin configures an
// operator that OLM installs. OLM does not write it into the operator's
// Deployment when it creates or upgrades it: it looks for the Subscription
// whose status.installedCSV names the Deployment's CSV, and that status
// names the CSV only once the CSV has succeeded, which needs the
// Deployment's pod to be ready. So every install and upgrade first runs a
// pod without the configuration, then rolls the Deployment again with it
// (operator-lifecycle-manager #2100). That first pod serves admission as
// soon as it is ready, and leads once the old pod is gone: left alone it
// would apply the default size policy, and roll every memcached Deployment
// to the CSV's image and back, emptying every cache twice.
//
// [Apply] reads the Subscription at start and sets in the process what
// OLM's second rollout will set, before the manager reads its environment.
// Variables that come from a Secret or a ConfigMap cannot be read this way;
// [Apply] names those it could not set.
package subscriptionconfig
