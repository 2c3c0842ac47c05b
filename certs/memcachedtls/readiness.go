package memcachedtls

import (
	"net/http"
	"sync/atomic"
	"time"
)

// readinessTimeout bounds how long /readyz waits for memcached. A probe
// with kubelet's default timeout, one second, gives up about when the
// handler does; a probe's timeoutSeconds of 2 lets the 503 through.
const readinessTimeout = time.Second

// ReadinessHandler serves GET /readyz: 200 when memcached answers version
// on its plain loopback listener at memcachedAddr, 503 when it does not.
//
// memcached's TLS port cannot be probed by kubelet instead: a TCP probe
// opens and closes a connection without a handshake, and memcached counts
// each one in ssl_handshake_errors, which would then mean nothing.
func ReadinessHandler(memcachedAddr string) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		v, err := version(r.Context(), memcachedAddr, readinessTimeout)
		if err != nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte(err.Error() + "\n"))
			return
		}
		_, _ = w.Write([]byte("memcached " + v + "\n"))
	})
	return mux
}

// newHealthServer serves ReadinessHandler, and at ServedPath what served
// holds, with every phase of a request bounded: only kubelet and the
// operator should call it, and a slow or large request from anyone else
// must not hold the sidecar's memory.
func newHealthServer(memcachedAddr string, served *atomic.Pointer[Served]) *http.Server {
	mux := http.NewServeMux()
	mux.Handle("GET /readyz", ReadinessHandler(memcachedAddr))
	mux.Handle("GET "+ServedPath, servedHandler(served))
	return &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 2 * time.Second,
		ReadTimeout:       5 * time.Second,
		WriteTimeout:      5 * time.Second,
		IdleTimeout:       30 * time.Second,
		MaxHeaderBytes:    4 << 10,
	}
}
