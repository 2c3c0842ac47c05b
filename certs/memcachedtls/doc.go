/*
Package memcachedtls is the sidecar of a memcached pod that serves TLS: it
hands memcached a renewed certificate without restarting it, so the cache
keeps its items and its clients their connections.

The pod mounts the Secret at [DefaultDir] (tls.crt, tls.key and, when
client certificates are required, ca.crt), and memcached reads them from
there at start. Kubelet updates the volume in place when the Secret
changes. memcached (before 1.6.40) does not watch its files; it loads them again
when told to with the text command refresh_certs, which the pod accepts
only on a plain listener bound to loopback ([DefaultMemcachedAddr]).

Three pieces share one vocabulary of problems, a [*Problem] whose message
names the Secret and what to fix (`Secret "web-tls": tls.key does not
match the certificate in tls.crt`), and whose [Reason] code can switch on:

  - [Secret.Check] judges the files as memcached would load them: a
    certificate, the key that matches it, valid now, and a CA when client
    certificates are required. The pod's init container runs it, so that a
    pod whose Secret is missing or broken stops with that message as its
    termination message, which the operator copies into the Memcached's
    status, instead of memcached failing with OpenSSL's words.
  - [Run] reads the files every [Options.Interval] and, when their content
    differs from what memcached last accepted and passes the check, sends
    refresh_certs. A refresh that fails (memcached reads the certificate
    and then the key, so one can race kubelet's swap) is sent again at the
    next tick; a check that fails is logged and nothing is sent, so
    memcached keeps serving its current certificate. The first refresh
    after a start is always sent, so a sidecar restarted after a change
    leaves no gap.
  - [ReadinessHandler] answers /readyz for memcached's readiness probe by
    asking memcached for its version on the loopback listener: a TCP probe
    of the TLS port would count as a failed handshake each time.

Beside /readyz, the health server answers [ServedPath] with the serial
number and validity of the certificate the last refresh handed memcached,
which the operator reads with [ReadServed] to report a certificate near its
end while the pod runs (controllers/servedcert).

From main:

	leaf, err := memcachedtls.Secret{Dir: dir, Name: name}.Check(time.Now())
	err = memcachedtls.Run(ctx, memcachedtls.Options{Secret: memcachedtls.Secret{Name: name}})

Key material is never logged: a refresh is logged with the certificate's
serial number and expiry.
*/
package memcachedtls
