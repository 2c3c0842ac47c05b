/*
Package memcached holds the tests of the operator's code that talks to
memcached against real memcached processes on this host: the release the
operator ships (Debian trixie's, which make memcached unpacks into bin/)
and the oldest release it supports (the host's Debian package).

  - command_test.go: the command line the operator builds from a spec
    (package controllers/operand), at the edges of admission, starts each
    release, which reads its settings back.
  - warmup_stats_test.go: the counters a rollout's warm gate reads
    (package controllers/warmup), from each release and from servers
    that are not memcached.
  - tls_*_test.go: the TLS sidecar's logic (package certs/memcachedtls)
    with memcached serving TLS from a Secret volume: a renewal loaded in
    place with items and connections kept, readiness that follows
    memcached, refusals of what is not memcached.

They start no cluster; make test runs them.
*/
package memcached
