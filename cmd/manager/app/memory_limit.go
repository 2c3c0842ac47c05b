package app

import (
	"fmt"
	"os"
	"runtime/debug"
	"strconv"

	ctrl "sigs.k8s.io/controller-runtime"
)

// memoryLimitEnv holds the container's memory limit in bytes: the
// Deployment sets it from limits.memory with a resourceFieldRef.
//
// GOMEMLIMIT cannot be set that way: a resourceFieldRef gives the limit
// itself, a bare number, and a Go runtime held to 100% of the container's
// limit is killed by the kernel before its collector makes room. The
// share is taken here instead, from the manifest's own figure, so that the
// limit and the soft limit cannot drift apart, whatever the cgroup version.
const memoryLimitEnv = "MEMORY_LIMIT"

// goMemoryShare is the part of the container's limit given to the Go
// runtime as its soft limit. The rest is for what the runtime does not
// count and the kernel does: the executable's pages that are resident
// (text and data are some 35 MB, 13% of the default 256Mi) and memory the
// runtime freed but has not yet returned.
const goMemoryShare = 0.8

// goMemoryLimit is the soft limit for the Go runtime, from the environment
// getenv reads: goMemoryShare of MEMORY_LIMIT. ok is false when there is
// none to set: without MEMORY_LIMIT, or when GOMEMLIMIT is set, which the
// runtime read at start and which wins as the explicit choice.
func goMemoryLimit(getenv func(string) string) (limit int64, ok bool, err error) {
	v := getenv(memoryLimitEnv)
	if v == "" || getenv("GOMEMLIMIT") != "" {
		return 0, false, nil
	}
	bytes, err := strconv.ParseInt(v, 10, 64)
	if err != nil || bytes <= 0 {
		return 0, false, fmt.Errorf("%s=%q: want the container's memory limit, a positive number of bytes", memoryLimitEnv, v)
	}
	return int64(float64(bytes) * goMemoryShare), true, nil
}

// setMemoryLimit gives the Go runtime its soft memory limit from the
// environment (goMemoryLimit), so that the collector works harder before
// the container reaches its limit instead of letting the kernel kill it.
func setMemoryLimit() error {
	limit, ok, err := goMemoryLimit(os.Getenv)
	if err != nil || !ok {
		return err
	}
	debug.SetMemoryLimit(limit)
	ctrl.Log.WithName("setup").Info("Go memory limit set from the container's", "containerLimit", os.Getenv(memoryLimitEnv), "goMemoryLimit", limit)
	return nil
}

// gcPercent is the collector's target when GOGC is not set: the heap may
// grow by half what was live at the last collection before the next one,
// where Go's default lets it double. Most of the operator's heap is its
// cache, which only grows with the objects it watches, so the collector's
// headroom, not the cache, set the peak; the CPU the extra collections cost
// did not show beside the run-to-run spread (make bench's converge; the
// figures are in the commit that set it).
const gcPercent = 50

// goGCPercent is the collector's target from the environment getenv reads:
// gcPercent, unless GOGC is set, which the runtime read at start and which
// wins as the explicit choice.
func goGCPercent(getenv func(string) string) (int, bool) {
	if getenv("GOGC") != "" {
		return 0, false
	}
	return gcPercent, true
}

// setGCPercent sets the collector's target (goGCPercent).
func setGCPercent() {
	if p, ok := goGCPercent(os.Getenv); ok {
		debug.SetGCPercent(p)
	}
}
