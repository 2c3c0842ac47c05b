package memcachedtls

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"sync/atomic"
	"time"
)

// The pod's contract, as the operator's Deployment sets it up.
const (
	// DefaultDir is where the Secret volume is mounted.
	DefaultDir = "/etc/memcached/tls"
	// DefaultMemcachedAddr is memcached's plain listener, on loopback only.
	DefaultMemcachedAddr = "127.0.0.1:11212"
	// DefaultHealthAddr serves /readyz for memcached's readiness probe.
	DefaultHealthAddr = ":11213"
	// DefaultInterval is how often the files are read. Kubelet's own
	// refresh of the volume (a minute or more) dominates the time a
	// renewed certificate takes to be served.
	DefaultInterval = 2 * time.Second
)

// Options configure Run.
type Options struct {
	// Secret is the mounted Secret; Secret.Name is required.
	Secret Secret
	// MemcachedAddr is memcached's plain loopback listener (host:port).
	MemcachedAddr string
	// HealthAddr is where /readyz is served.
	HealthAddr string
	// Interval is how often the files are read.
	Interval time.Duration
	// Log receives one line per refresh and per failure; never key
	// material.
	Log *slog.Logger
}

// defaulted returns o with every unset field at its default.
func (o Options) defaulted() Options {
	if o.Secret.Dir == "" {
		o.Secret.Dir = DefaultDir
	}
	if o.MemcachedAddr == "" {
		o.MemcachedAddr = DefaultMemcachedAddr
	}
	if o.HealthAddr == "" {
		o.HealthAddr = DefaultHealthAddr
	}
	if o.Interval == 0 {
		o.Interval = DefaultInterval
	}
	if o.Log == nil {
		o.Log = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	return o
}

// Run keeps memcached's certificate in step with the Secret's files and
// serves /readyz, until ctx ends; then it returns nil once both have
// stopped. It fails at once if HealthAddr cannot be listened on.
func Run(ctx context.Context, o Options) error {
	o = o.defaulted()
	if o.Secret.Name == "" {
		return errors.New("memcachedtls: the Secret's name is required")
	}
	if o.Interval < 0 {
		return fmt.Errorf("memcachedtls: the interval must be positive, got %s", o.Interval)
	}
	l, err := net.Listen("tcp", o.HealthAddr)
	if err != nil {
		return err
	}
	var certificate atomic.Pointer[Served]
	srv := newHealthServer(o.MemcachedAddr, &certificate)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()

	// The reloader stops with ctx, or when the health server fails.
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	r := &reloader{secret: o.Secret, memcached: o.MemcachedAddr, interval: o.Interval, log: o.Log, now: time.Now, served: &certificate}
	reloaded := make(chan struct{})
	go func() {
		defer close(reloaded)
		r.run(ctx)
	}()

	select {
	case <-ctx.Done():
	case err = <-served:
	}
	stop()
	// A probe in flight takes at most readinessTimeout.
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 2*readinessTimeout)
	defer cancel()
	err = errors.Join(err, srv.Shutdown(shutdownCtx))
	<-reloaded
	return err
}
