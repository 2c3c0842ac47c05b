// Package memcachedproc runs memcached as a host process with a command
// line the operator builds, listening on loopback only: the baseline a
// memcached pod is compared with. It runs the release the operator ships
// (Debian trixie's, which make memcached unpacks into bin/) or, for the
// compatibility proofs, the host's Debian memcached, the oldest supported.
//
//	srv, err := memcachedproc.Start(ctx, operand.Command(settings), logPath)
//	defer srv.Stop(10 * time.Second)
//	c, err := memcache.Dial(ctx, srv.Addr)
package memcachedproc
