// Command pause is the local cluster's pod sandbox: the process that holds a
// pod's namespaces, as registry.k8s.io/pause does. It runs as PID 1 of the
// sandbox, so it reaps the orphans it inherits, and it exits on SIGINT or
// SIGTERM. It is built static and put into an image by package images:
// there is no registry to pull the real one from.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	signals := make(chan os.Signal, 8)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for sig := range signals {
		if sig != syscall.SIGCHLD {
			os.Exit(0)
		}
		for {
			pid, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
	}
}
