package main

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/example-inc/memcached-operator/hack/local-cluster/localcluster"
)

// stopTimeout bounds down's wait for the launcher, which stops every
// process of the cluster before it exits.
const stopTimeout = time.Minute

// down stops the cluster in o.dir, keeping its objects for the next start.
// With none running, it removes what a real node whose launcher was killed
// left on the machine (containers, mounts, the bridge, iptables rules).
func down(o options) error {
	pid, alive := running(o.dir)
	if !alive {
		fmt.Println("local cluster not running")
		if err := os.Remove(pidPath(o.dir)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		return removeNodeLeftovers(o)
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		return err
	}
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	timeout := time.After(stopTimeout)
	for syscall.Kill(pid, 0) == nil {
		select {
		case <-timeout:
			return fmt.Errorf("local cluster (pid %d) did not stop within %s", pid, stopTimeout)
		case <-tick.C:
		}
	}
	fmt.Println("local cluster stopped")
	return nil
}

func removeNodeLeftovers(o options) error {
	lock, err := localcluster.ReadNodeLock()
	if err != nil || !lock.Left {
		return err
	}
	if err := localcluster.RemoveNodeLeftovers(o.controlPlaneDir()); err != nil {
		return fmt.Errorf("removing what a killed real node left: %w", err)
	}
	fmt.Println("nothing of a real node is left on this machine")
	return nil
}
