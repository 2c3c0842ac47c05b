package main

import (
	"fmt"
	"slices"
)

// hitRatioGapTarget is the rollout scenario's goal (issue #44): the lowest
// hit ratio clients see while a rollout paced by warmth runs is this many
// percentage points above the lowest of the same rollout without pacing.
const hitRatioGapTarget = 20

// rolloutResults is what -rollout-out holds: the rollout scenario's run.
type rolloutResults = caseResults[rolloutConfig, rolloutCase]

// rolloutConfig is the load and the change, the same for every case.
type rolloutConfig struct {
	Size          int32   `json:"size"`
	Keys          int     `json:"keys"`
	ZipfS         float64 `json:"zipfS"`
	GetsPerSecond int     `json:"getsPerSecond"`
	Workers       int     `json:"workers"`
	ValueBytes    int     `json:"valueBytes"`
	BucketSeconds float64 `json:"bucketSeconds"`
	SteadySeconds float64 `json:"steadySeconds"`
	TailSeconds   float64 `json:"tailSeconds"`
	// WarmupTimeout is spec.rollout.warmupTimeout, empty for the default.
	WarmupTimeout string `json:"warmupTimeout,omitempty"`
	// Change is what the scenario changes to roll the pods.
	Change string `json:"change"`
}

// rolloutCase is one Memcached rolled under the load: the hit ratio over
// time, the addresses the load was given, and how long each new pod waited.
type rolloutCase struct {
	Pacing string `json:"pacing"`
	// ChangedAt and DoneAt are seconds from the load's start: the change,
	// and when the Deployment had only new pods, all available.
	ChangedAt float64     `json:"changedAtSeconds"`
	DoneAt    float64     `json:"doneAtSeconds"`
	Buckets   []hitBucket `json:"buckets"`
	// Servers are the address lists the discovery gave the load, each when
	// it started.
	Servers []serverList `json:"servers"`
	Pods    []podWarmup  `json:"pods"`
	Error   string       `json:"error,omitempty"`
}

type serverList struct {
	At        float64  `json:"atSeconds"`
	Addresses []string `json:"addresses"`
}

// podWarmup is how one pod the rollout started became ready: the reason
// and message of its warm condition, and the seconds from its containers
// being ready to that condition.
type podWarmup struct {
	Name    string  `json:"name"`
	Reason  string  `json:"reason"`
	Message string  `json:"message"`
	Waited  float64 `json:"waitedSeconds"`
}

// hitRatio is b's hits over its gets, in percent; -1 for no gets.
func (b hitBucket) hitRatio() float64 {
	if b.Gets == 0 {
		return -1
	}
	return 100 * float64(b.Hits) / float64(b.Gets)
}

// span adds up the buckets that lie wholly within [from, to) seconds.
func (c rolloutCase) span(width, from, to float64) hitBucket {
	var sum hitBucket
	for i, b := range c.Buckets {
		if start := float64(i) * width; start >= from && start+width <= to {
			sum.Gets, sum.Hits, sum.Errors = sum.Gets+b.Gets, sum.Hits+b.Hits, sum.Errors+b.Errors
		}
	}
	return sum
}

// lowest is the lowest hit ratio over n consecutive buckets from the
// change on, and when the first of them starts (seconds from the change).
// Buckets without gets say nothing and are left out.
func (c rolloutCase) lowest(width float64, n int) (ratio, at float64) {
	ratio, at = -1, -1
	for i := range c.Buckets {
		start := float64(i) * width
		if start < c.ChangedAt || i+n > len(c.Buckets) {
			continue
		}
		sum := c.span(width, start, start+float64(n)*width)
		if r := sum.hitRatio(); r >= 0 && (ratio < 0 || r < ratio) {
			ratio, at = r, start-c.ChangedAt
		}
	}
	return ratio, at
}

// fewestServers is the fewest addresses the load was given from the
// change on, and how many times the list changed meanwhile.
func (c rolloutCase) fewestServers() (fewest, changes int) {
	fewest = -1
	for i, s := range c.Servers {
		last := i == len(c.Servers)-1 || c.Servers[i+1].At > c.ChangedAt
		if s.At <= c.ChangedAt && !last {
			continue
		}
		if fewest < 0 || len(s.Addresses) < fewest {
			fewest = len(s.Addresses)
		}
		if s.At > c.ChangedAt {
			changes++
		}
	}
	return fewest, changes
}

// listChanges are the changes of the address list from the change on, each
// an address added (+) or removed (-) and when, in seconds after the change.
func (c rolloutCase) listChanges() []string {
	var out []string
	for i := 1; i < len(c.Servers); i++ {
		s := c.Servers[i]
		if s.At <= c.ChangedAt {
			continue
		}
		before, after := c.Servers[i-1].Addresses, s.Addresses
		for _, a := range after {
			if !slices.Contains(before, a) {
				out = append(out, fmt.Sprintf("+%s (%.1f s)", a, s.At-c.ChangedAt))
			}
		}
		for _, a := range before {
			if !slices.Contains(after, a) {
				out = append(out, fmt.Sprintf("-%s (%.1f s)", a, s.At-c.ChangedAt))
			}
		}
	}
	return out
}

// rolloutCaseOf is the case of pacing in r, nil if it did not run.
func rolloutCaseOf(r *rolloutResults, pacing string) *rolloutCase {
	for i := range r.Cases {
		if r.Cases[i].Pacing == pacing && r.Cases[i].Error == "" {
			return &r.Cases[i]
		}
	}
	return nil
}

// rolloutFailures are why the scenario fails: a case that did not
// complete, or a server list that lost a server during the rollout.
func rolloutFailures(r *rolloutResults) []string {
	var out []string
	for _, c := range r.Cases {
		if c.Error != "" {
			out = append(out, fmt.Sprintf("pacing %s: %s", c.Pacing, c.Error))
			continue
		}
		if fewest, _ := c.fewestServers(); fewest < int(r.Config.Size) {
			out = append(out, fmt.Sprintf("pacing %s: clients were given %d addresses during the rollout, fewer than the %d pods",
				c.Pacing, fewest, r.Config.Size))
		}
	}
	return out
}

// evaluateRolloutTargets compares the lowest hit ratios of the cases.
func evaluateRolloutTargets(r *rolloutResults, paced, unpaced string) []target {
	p, u := rolloutCaseOf(r, paced), rolloutCaseOf(r, unpaced)
	if p == nil || u == nil {
		return nil
	}
	w := r.Config.BucketSeconds
	pl, _ := p.lowest(w, 1)
	ul, _ := u.lowest(w, 1)
	return []target{{
		Name:   "lowest hit ratio during a rollout, pacing " + paced + " against " + unpaced,
		Target: fmt.Sprintf(">= %d points higher", hitRatioGapTarget),
		Value:  fmt.Sprintf("%.1f %% against %.1f %%: %+.1f points", pl, ul, pl-ul),
		Met:    pl-ul >= hitRatioGapTarget,
	}}
}
