package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/example-inc/memcached-operator/certs/memcachedtls"
)

// The subcommands.
const (
	commandCheck = "check"
	commandRun   = "run"
)

// usage is the whole command line.
const usage = `usage:
  tls-reloader check --secret=NAME [--dir=DIR] [--client-ca] [--termination-log=FILE]
  tls-reloader run --secret=NAME [--dir=DIR] [--client-ca] [--memcached=HOST:PORT] [--health=ADDR] [--interval=DURATION]`

// options is the command line: the subcommand and its flags.
type options struct {
	command string
	// run is Run's options; check uses its Secret.
	run memcachedtls.Options
	// terminationLog is where check writes its message for the pod's
	// status.
	terminationLog string
}

// parseArgs reads the arguments after the program's name. Output is where
// flag errors and help go.
func parseArgs(args []string, output io.Writer) (options, error) {
	var o options
	if len(args) == 0 || (args[0] != commandCheck && args[0] != commandRun) {
		return o, fmt.Errorf("want a subcommand, check or run\n%s", usage)
	}
	o.command = args[0]
	fs := flag.NewFlagSet("tls-reloader "+o.command, flag.ContinueOnError)
	fs.SetOutput(output)
	fs.StringVar(&o.run.Secret.Dir, "dir", memcachedtls.DefaultDir, "where the Secret volume is mounted")
	fs.StringVar(&o.run.Secret.Name, "secret", "", "the Secret's name, for the messages (required)")
	fs.BoolVar(&o.run.Secret.ClientCA, "client-ca", false, "memcached requires client certificates, so ca.crt must be there")
	if o.command == commandCheck {
		fs.StringVar(&o.terminationLog, "termination-log", "/dev/termination-log", "file for the problem found, which kubelet reports as the container's termination message")
	} else {
		fs.StringVar(&o.run.MemcachedAddr, "memcached", memcachedtls.DefaultMemcachedAddr, "memcached's plain loopback listener")
		fs.StringVar(&o.run.HealthAddr, "health", memcachedtls.DefaultHealthAddr, "address of /readyz")
		fs.DurationVar(&o.run.Interval, "interval", memcachedtls.DefaultInterval, "how often the files are read")
	}
	if err := fs.Parse(args[1:]); err != nil {
		return o, err
	}
	var errs []error
	if fs.NArg() > 0 {
		errs = append(errs, fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " ")))
	}
	if o.run.Secret.Name == "" {
		errs = append(errs, errors.New("--secret is required"))
	}
	if o.command == commandRun && o.run.Interval <= 0 {
		errs = append(errs, fmt.Errorf("--interval must be positive, got %s", o.run.Interval))
	}
	return o, errors.Join(errs...)
}
