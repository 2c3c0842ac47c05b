package drain

import (
	"context"
	"errors"
	"net/http"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
)

// errStopping is what the readiness check reports once a stop was asked for.
var errStopping = errors.New("stopping: draining admission calls before shutdown")

// Drain tells whether a stop was asked for.
type Drain struct {
	stopping atomic.Bool
}

// Ready is a readiness check (a healthz.Checker): nil until the first
// signal, an error after it, so that kubelet takes a pod that is stopping
// for another reason than its deletion out of the Service too.
func (d *Drain) Ready(*http.Request) error {
	if d.stopping.Load() {
		return errStopping
	}
	return nil
}

// Stop starts the drain: from now on Ready fails and answers close their
// connections. NotifyContext calls it on the first signal.
func (d *Drain) Stop() {
	d.stopping.Store(true)
}

// Handler wraps a webhook's handler so that, once stopping, each answer
// tells the client to close its connection. The API server keeps
// connections to a webhook Service open and keeps using one after its pod
// left the Service; when the shutdown closes it as a call is being written,
// the API server reports EOF and does not retry (the call is a POST), and
// with failurePolicy Fail the write is refused. Closed after an answer
// instead, the connection is opened again through the Service, to a pod
// that stays.
func (d *Drain) Handler(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if d.stopping.Load() {
			w.Header().Set("Connection", "close")
		}
		h.ServeHTTP(w, r)
	})
}

// WebhookServer is a webhook.Server whose webhooks answer through
// Drain.Handler.
type WebhookServer struct {
	webhook.Server
	Drain *Drain
}

// Register implements webhook.Server.
func (s WebhookServer) Register(path string, hook http.Handler) {
	s.Server.Register(path, s.Drain.Handler(hook))
}

// NotifyContext returns a context that is cancelled delay after the process
// receives SIGTERM or SIGINT, and the Drain that reports it. A second signal
// exits the process with status 1.
func NotifyContext(delay time.Duration, log logr.Logger) (context.Context, *Drain) {
	signals := make(chan os.Signal, 2)
	signal.Notify(signals, syscall.SIGTERM, os.Interrupt)
	return notify(signals, delay, log, os.Exit)
}

// notify is NotifyContext reading signals from a channel, and exiting
// through exit, so that the timing can be tested without signalling the
// test process.
func notify(signals <-chan os.Signal, delay time.Duration, log logr.Logger, exit func(int)) (context.Context, *Drain) {
	ctx, cancel := context.WithCancel(context.Background())
	d := &Drain{}
	go func() {
		sig := <-signals
		d.Stop()
		if delay > 0 {
			log.Info("stop requested: serving for the shutdown delay before stopping", "signal", sig.String(), "delay", delay)
			select {
			case <-time.After(delay):
			case <-signals:
				exit(1)
				return
			}
		}
		cancel()
		<-signals
		exit(1)
	}()
	return ctx, d
}
