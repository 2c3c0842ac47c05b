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
		d.stopping.Store(true)
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
