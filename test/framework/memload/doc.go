// Package memload drives a memcached with a fixed load and measures what it
// serves: several connections, each sending one request at a time (a closed
// loop, as a web tier's clients do), a fixed mix of gets and sets over a
// preloaded key set, for a bounded time, every request's latency recorded in
// an HDR histogram. The same load against two memcached makes their figures
// comparable; test/bench compares a pod's with the host's.
//
//	o := memload.Options{Addr: addr, Duration: 10 * time.Second}
//	err := memload.Preload(ctx, o)
//	r, err := memload.Run(ctx, o)
//	fmt.Println(r.OpsPerSecond(), r.Latency.ValueAtQuantile(99))
//
// It uses package memcache's client, so a request costs the client what any
// of the tests' requests do; on a machine of few cores the client's CPU is
// part of what both sides of a comparison share.
package memload
