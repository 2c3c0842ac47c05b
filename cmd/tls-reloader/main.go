// Command tls-reloader runs in every memcached pod that serves TLS: `check`
// as the init container that stops the pod with a readable message when the
// Secret is unusable, `run` as the sidecar that refreshes memcached's
// certificate when the Secret changes and serves its readiness. See package
// memcachedtls.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/example-inc/memcached-operator/certs/memcachedtls"
)

func main() {
	o, err := parseArgs(os.Args[1:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "tls-reloader:", err)
		os.Exit(2)
	}
	if o.command == commandCheck {
		os.Exit(check(o))
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	o.run.Log = slog.New(slog.NewTextHandler(os.Stderr, nil))
	if err := memcachedtls.Run(ctx, o.run); err != nil {
		fmt.Fprintln(os.Stderr, "tls-reloader:", err)
		os.Exit(1)
	}
}

// check is the init container: 0 when the files are usable; otherwise 1,
// with the problem as the one line of the termination log, which kubelet
// puts in the container's status for the operator to read.
func check(o options) int {
	if _, err := o.run.Secret.Check(time.Now()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		// No newline: kubelet copies the file into the status as it is.
		if werr := os.WriteFile(o.terminationLog, []byte(err.Error()), 0o644); werr != nil {
			fmt.Fprintln(os.Stderr, "tls-reloader: writing the termination log:", werr)
		}
		return 1
	}
	return 0
}
