package app

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"syscall"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

// Main runs the manager with the command line args (without the program
// name) until it stops, and returns the process's exit code: 0 after a
// clean stop or --help, 2 for invalid flags or environment, 1 otherwise.
func Main(args []string) int {
	o, err := parseOptions(args)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "invalid flags:", err)
		return 2
	}
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&o.zap)))
	if err := setMemoryLimit(); err != nil {
		fmt.Fprintln(os.Stderr, "invalid environment:", err)
		return 2
	}
	setGCPercent()
	if o.olmCSV != "" && o.podNamespace != "" {
		if err := adoptSubscriptionConfig(o); err != nil {
			ctrl.Log.Error(err, "reading the Subscription's configuration")
			return 1
		}
		// parseOptions reads the environment, which the Subscription has just changed.
		if o, err = parseOptions(args); err != nil {
			fmt.Fprintln(os.Stderr, "invalid configuration from the Subscription:", err)
			return 2
		}
	}
	if err := run(o); err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			err = fmt.Errorf("%w (is another memcached-operator running on this host? Stop it, or give this one other ports)", err)
		}
		ctrl.Log.Error(err, "manager stopped")
		return 1
	}
	return 0
}
