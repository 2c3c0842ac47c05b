// Package warmup decides when a memcached pod that a rollout started is warm
// enough for the rollout to stop the next old pod.
//
// A new pod starts empty. Clients that shard keys over the Service's
// addresses send it its share of requests from the moment it is listed, and
// refill it on each miss; its hit ratio climbs as it does. Stopping the next
// old pod before then would leave two cold shares at once, and a rollout
// that moves on as soon as each port answers empties the whole cache within
// a minute. So the operator holds each new pod unready (a readiness gate)
// until [Rule] finds it warm against its peers: it holds a share of the
// items of their median pod, or its hit ratio over the last few seconds has
// come within some points of theirs.
//
// [Read] asks a pod's memcached for the counters the rule compares, on its
// client port, never through a proxy: the cluster proxy OLM gives the
// operator is for leaving the cluster.
package warmup
