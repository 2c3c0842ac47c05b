// Package memcache speaks memcached's text protocol, as much of it as the
// tests need to show that a memcached really serves: store and read back an
// item, over plain TCP or TLS, and read the settings it runs with; and the
// meta commands (meta.go) with which the bench fills a memcached, sets
// pipelined in quiet mode.
//
//	c, err := memcache.Dial(ctx, net.JoinHostPort(pod.Status.PodIP, "11211"))
//	defer c.Close()
//	err = c.Set("k", []byte("v"))
//	v, err := c.Get("k")
//	settings, err := c.StatsSettings() // settings["maxbytes"] == "67108864"
package memcache
