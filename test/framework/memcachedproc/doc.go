// Package memcachedproc runs Debian's memcached (make memcached) as a host
// process with a command line the operator builds, listening on loopback
// only: the baseline a memcached pod is compared with.
//
//	srv, err := memcachedproc.Start(ctx, operand.Command(settings), logPath)
//	defer srv.Stop(10 * time.Second)
//	c, err := memcache.Dial(ctx, srv.Addr)
package memcachedproc
