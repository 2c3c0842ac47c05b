package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/example-inc/memcached-operator/hack/repo"
)

func TestSmokeDefaultsYieldToFlags(t *testing.T) {
	o := parsed(t, "-smoke", "-n", "5")
	if o.n != 5 || o.idle != 20*time.Second || o.unrelatedPods != 200 || o.out != "" {
		t.Errorf("smoke options = n %d idle %s pods %d out %q", o.n, o.idle, o.unrelatedPods, o.out)
	}
	o = parsed(t)
	if o.n != 100 || o.idle != 5*time.Minute || !strings.HasSuffix(o.out, "docs/bench/results.json") {
		t.Errorf("default options = n %d idle %s out %q", o.n, o.idle, o.out)
	}
}

func TestDefaultOutputs(t *testing.T) {
	names := map[string]func(o options) string{
		"results.json":   func(o options) string { return o.out },
		"converge.svg":   func(o options) string { return o.plot },
		"memcached.json": func(o options) string { return o.memcachedOut },
		"memory.json":    func(o options) string { return o.memoryOut },
		"rollout.json":   func(o options) string { return o.rolloutOut },
		"rollout.svg":    func(o options) string { return o.rolloutPlot },
	}
	published := parsed(t, "-rollout-out", "/elsewhere/rollout.json")
	smoke := parsed(t, "-smoke", "-plot", "/elsewhere/converge.svg")
	smoke.defaultOutputs("/work")
	for name, get := range names {
		wantPublished, wantSmoke := filepath.Join(repo.Root(), "docs", "bench", name), filepath.Join("/work", name)
		switch name {
		case "rollout.json":
			wantPublished = "/elsewhere/rollout.json"
		case "converge.svg":
			wantSmoke = "/elsewhere/converge.svg"
		}
		if got := get(published); got != wantPublished {
			t.Errorf("published run's %s = %q, want %q", name, got, wantPublished)
		}
		if got := get(smoke); got != wantSmoke {
			t.Errorf("smoke run's %s = %q, want %q", name, got, wantSmoke)
		}
	}
}

func TestScenarioDependencies(t *testing.T) {
	o := parsed(t, "-scenarios", "rss", "-pods", "3000", "-n", "100")
	if !o.wants(scenarioConverge) || o.wants(scenarioIdle) || o.wants(scenarioWebhook) {
		t.Error("rss should pull in converge and nothing else")
	}
	if got := o.maxPods(); got != 100*5+3000 {
		t.Errorf("maxPods = %d, want 3500", got)
	}
	if got := nodesFor(o.maxPods()); got != 3 {
		t.Errorf("nodes = %d, want 3", got)
	}
	if _, err := parseOptions([]string{"-scenarios", "converge,bogus"}); err == nil {
		t.Error("an unknown scenario should be refused")
	}
	if o := parsed(t, "-scenarios", "webhook"); o.wants(scenarioConverge) {
		t.Error("webhook alone needs no Memcached set")
	}
	// memcached alone starts no control-plane cluster and builds no operator.
	if o := parsed(t, "-scenarios", "memcached"); o.controlPlane() || !o.wants(scenarioMemcached) {
		t.Error("memcached alone should run without the control plane's scenarios")
	}
	if o := parsed(t, "-smoke"); !o.controlPlane() || !o.wants(scenarioMemcached) || o.memcachedPhase != 2*time.Second {
		t.Errorf("a smoke run should run every scenario, memcached for 2s a phase (got %s)", o.memcachedPhase)
	}
	// rollout, on the real node, bounds each pod's wait in a smoke run.
	if o := parsed(t, "-scenarios", "rollout"); o.controlPlane() || o.rolloutWarmupTimeout != 0 {
		t.Errorf("rollout alone should run without the control plane's scenarios, with the API's warm-up timeout (got %s)", o.rolloutWarmupTimeout)
	}
	if o := parsed(t, "-smoke"); !o.wants(scenarioRollout) || o.rolloutWarmupTimeout != 20*time.Second {
		t.Errorf("a smoke run should roll with a warm-up timeout of 20s (got %s)", o.rolloutWarmupTimeout)
	}
	if _, err := parseOptions([]string{"-rollout-zipf", "1"}); err == nil {
		t.Error("a Zipf exponent of 1 should be refused")
	}
}

// parsed is the options of args, failing t if they are refused.
func parsed(t *testing.T, args ...string) options {
	t.Helper()
	o, err := parseOptions(args)
	if err != nil {
		t.Fatal(err)
	}
	return o
}
