// Command manager runs the memcached-operator: the Memcached reconciler and
// its admission webhooks.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"syscall"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

func main() {
	o, err := parseOptions(os.Args[1:])
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "invalid flags:", err)
		os.Exit(2)
	}
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&o.zap)))
	if err := setMemoryLimit(); err != nil {
		fmt.Fprintln(os.Stderr, "invalid environment:", err)
		os.Exit(2)
	}
	if o.olmCSV != "" && o.podNamespace != "" {
		if err := adoptSubscriptionConfig(o); err != nil {
			ctrl.Log.Error(err, "reading the Subscription's configuration")
			os.Exit(1)
		}
		if o, err = parseOptions(os.Args[1:]); err != nil {
			fmt.Fprintln(os.Stderr, "invalid configuration from the Subscription:", err)
			os.Exit(2)
		}
	}
	if err := run(o); err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			err = fmt.Errorf("%w (is another memcached-operator running on this host? Stop it, or give this one other ports)", err)
		}
		ctrl.Log.Error(err, "manager stopped")
		os.Exit(1)
	}
}
