package main

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/example-inc/memcached-operator/hack/repo"
)

// Scenario names, in the order they run (doc.go; wants says which pull in
// converge).
const (
	scenarioMemcached = "memcached"
	scenarioMemory    = "memory"
	scenarioRollout   = "rollout"
	scenarioFloor     = "floor"
	scenarioConverge  = "converge"
	scenarioIdle      = "idle"
	scenarioResize    = "resize"
	scenarioRSS       = "rss"
	scenarioWebhook   = "webhook"
)

func allScenarios() []string {
	return []string{scenarioMemcached, scenarioMemory, scenarioRollout, scenarioFloor, scenarioConverge, scenarioIdle, scenarioResize, scenarioRSS, scenarioWebhook}
}

// options are the bench's flags, defaulted and validated in one place; the
// flags' usage says what each is.
type options struct {
	n                    int
	size, resizeTo       int32
	unrelatedPods        int
	idle                 time.Duration
	rssWindow            time.Duration
	rssRepeats           int
	webhookRate          int
	webhookDuration      time.Duration
	waitTimeout          time.Duration
	memcachedPhase       time.Duration
	memcachedRounds      int
	memcachedConnections int
	memorySizes          []string
	memoryTLSConnections []int32
	memoryTurnover       float64
	memoryLargeFill      float64
	rolloutKeys          int
	rolloutZipfS         float64
	rolloutRate          int
	rolloutSteady        time.Duration
	rolloutTail          time.Duration
	rolloutWarmupTimeout time.Duration

	scenarios []string
	smoke     bool

	out, plot                                        string
	memcachedOut, memoryOut, rolloutOut, rolloutPlot string
	doc                                              string
	render                                           bool
	binDir                                           string
	workDir                                          string
	keep                                             bool
	// operatorArgs come after the bench's own flags, so that they win.
	operatorArgs []string
}

// smokeDefaults are what -smoke changes, unless a flag sets them: a run
// that exercises every scenario, small, for CI.
var smokeDefaults = [][2]string{
	{"n", "20"}, {"idle", "20s"}, {"pods", "200"}, {"rss-window", "3s"}, {"rss-repeats", "1"}, {"webhook-duration", "5s"},
	{"wait-timeout", "5m"}, {"memcached-phase", "2s"}, {"memcached-rounds", "1"}, {"memory-sizes", "64Mi"},
	{"memory-tls-conns", ""}, {"memory-turnover", "0.01"}, {"rollout-keys", "2000"}, {"rollout-steady", "3s"},
	{"rollout-tail", "3s"}, {"rollout-timeout", "20s"},
}

func smokeUsage() string {
	var flags []string
	for _, d := range smokeDefaults {
		flags = append(flags, "-"+d[0]+" "+cmp.Or(d[1], "''"))
	}
	return strings.Join(flags, " ")
}

func parseOptions(args []string) (options, error) {
	var o options
	var scenarios, operatorArgs, memorySizes, memoryTLSConns string
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.Usage = func() {
		_, _ = fmt.Fprintf(fs.Output(), "Usage: go -C test run ./bench [flags]\n\n"+
			"Runs the memcached-operator benchmarks on a local cluster; see docs/benchmarks.md.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	fs.IntVar(&o.n, "n", 100, "number of Memcached objects (1000 for the published figures)")
	size := fs.Int("size", 3, "spec.size of each Memcached at creation")
	resizeTo := fs.Int("resize-to", 5, "spec.size the resize storm sets on every Memcached")
	fs.IntVar(&o.unrelatedPods, "pods", 10000, "unrelated pods the rss scenario adds to the cluster")
	fs.DurationVar(&o.idle, "idle", 5*time.Minute, "length of the idle-writes window")
	fs.DurationVar(&o.rssWindow, "rss-window", 10*time.Second, "how long the rss scenario samples the settled operator's RSS")
	fs.IntVar(&o.rssRepeats, "rss-repeats", 3, "fresh operator starts per rss measurement; the medians are compared")
	fs.IntVar(&o.webhookRate, "webhook-rate", 20, "Memcached creates per second in the webhook scenario")
	fs.DurationVar(&o.webhookDuration, "webhook-duration", 30*time.Second, "how long the webhook scenario creates at -webhook-rate (twice: without and with webhooks)")
	fs.DurationVar(&o.waitTimeout, "wait-timeout", 20*time.Minute, "bound on every wait for objects to converge or pods to be ready")
	fs.DurationVar(&o.memcachedPhase, "memcached-phase", 10*time.Second, "how long the memcached scenario loads each memcached per round")
	fs.IntVar(&o.memcachedRounds, "memcached-rounds", 3, "rounds of the memcached scenario, each loading the host's memcached and every pod in turn")
	fs.IntVar(&o.memcachedConnections, "memcached-connections", 32, "connections of the memcached scenario's load")
	fs.StringVar(&memorySizes, "memory-sizes", "64Mi,256Mi,1Gi", "comma-separated spec.memory of the Memcached the memory scenario fills")
	fs.StringVar(&memoryTLSConns, "memory-tls-conns", "1024,4096", "comma-separated maxConnections of the Memcached of the first -memory-sizes the memory scenario fills serving TLS (none: empty)")
	fs.Float64Var(&o.memoryTurnover, "memory-turnover", 0.25, "the memory scenario sends small items until memcached has evicted this share of the items it holds")
	fs.Float64Var(&o.memoryLargeFill, "memory-large-fill", 1.5, "the memory scenario's large items write this many times spec.memory (at least one per connection)")
	fs.IntVar(&o.rolloutKeys, "rollout-keys", 20000, "the rollout scenario's key space")
	fs.Float64Var(&o.rolloutZipfS, "rollout-zipf", 1.01, "the Zipf exponent (> 1) of the rollout scenario's key popularity")
	fs.IntVar(&o.rolloutRate, "rollout-rate", 1000, "the rollout scenario's gets per second")
	fs.DurationVar(&o.rolloutSteady, "rollout-steady", 10*time.Second, "how long the rollout scenario's load runs before the change")
	fs.DurationVar(&o.rolloutTail, "rollout-tail", 20*time.Second, "how long the rollout scenario's load runs after the rollout")
	fs.DurationVar(&o.rolloutWarmupTimeout, "rollout-timeout", 0, "spec.rollout.warmupTimeout of the rollout scenario's Memcached (0: the API's default)")
	fs.StringVar(&scenarios, "scenarios", strings.Join(allScenarios(), ","), "comma-separated scenarios to run: "+strings.Join(allScenarios(), ", "))
	fs.BoolVar(&o.smoke, "smoke", false, "CI smoke run: "+smokeUsage()+" unless set, "+
		"results and plots in the work directory unless -out/-plot/-memcached-out/-memory-out/-rollout-out/-rollout-plot are set; "+
		"fails only if a scenario cannot complete or a counted target is missed")
	fs.StringVar(&o.out, "out", "", "results file (default docs/bench/results.json; with -smoke, in the work directory)")
	fs.StringVar(&o.memcachedOut, "memcached-out", "", "the memcached scenario's results file (default docs/bench/memcached.json; with -smoke, in the work directory)")
	fs.StringVar(&o.memoryOut, "memory-out", "", "the memory scenario's results file (default docs/bench/memory.json; with -smoke, in the work directory)")
	fs.StringVar(&o.rolloutOut, "rollout-out", "", "the rollout scenario's results file (default docs/bench/rollout.json; with -smoke, in the work directory)")
	fs.StringVar(&o.rolloutPlot, "rollout-plot", "", "SVG plot of the rollout scenario's hit ratio over time (default docs/bench/rollout.svg; with -smoke, in the work directory)")
	fs.StringVar(&o.doc, "doc", "", "document whose generated section the results rewrite (default docs/benchmarks.md; none with -smoke)")
	fs.BoolVar(&o.render, "render", false, "run nothing: rewrite -doc's generated sections, -plot and -rollout-plot from the results files -out, -memcached-out, -memory-out and -rollout-out")
	fs.StringVar(&o.plot, "plot", "", "SVG plot of objects converged over time (default docs/bench/converge.svg; with -smoke, in the work directory)")
	fs.StringVar(&o.binDir, "bin-dir", repo.ControlPlaneDir(), "control-plane binaries: etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok")
	fs.StringVar(&o.workDir, "workdir", "", "directory for the cluster, operator binary, logs and audit log (default a new temporary directory)")
	fs.BoolVar(&o.keep, "keep", false, "keep the work directory after a successful run (it is always kept after a failure)")
	fs.StringVar(&operatorArgs, "operator-args", "", "extra operator flags, space separated, e.g. \"--max-concurrent-reconciles=8\"")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	if o.smoke {
		set := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
		for _, d := range smokeDefaults {
			if !set[d[0]] {
				if err := fs.Set(d[0], d[1]); err != nil {
					return o, err
				}
			}
		}
	}
	o.size, o.resizeTo = int32(*size), int32(*resizeTo)
	o.operatorArgs = strings.Fields(operatorArgs)
	for _, m := range strings.Split(memorySizes, ",") {
		if m = strings.TrimSpace(m); m != "" {
			o.memorySizes = append(o.memorySizes, m)
		}
	}
	for _, c := range strings.Split(memoryTLSConns, ",") {
		if c = strings.TrimSpace(c); c == "" {
			continue
		}
		n, err := strconv.ParseInt(c, 10, 32)
		if err != nil || n < 1 {
			return o, fmt.Errorf("-memory-tls-conns: %q is not a positive number", c)
		}
		o.memoryTLSConnections = append(o.memoryTLSConnections, int32(n))
	}
	for _, s := range strings.Split(scenarios, ",") {
		if s = strings.TrimSpace(s); s != "" && !slices.Contains(o.scenarios, s) {
			o.scenarios = append(o.scenarios, s)
		}
	}
	if !o.smoke {
		o.defaultOutputs(filepath.Join(repo.Root(), "docs", "bench"))
		if o.doc == "" {
			o.doc = filepath.Join(repo.Root(), "docs", "benchmarks.md")
		}
	}
	return o, o.validate()
}

// validate reports every problem at once.
func (o options) validate() error {
	var errs []error
	if o.n < 1 {
		errs = append(errs, fmt.Errorf("-n must be at least 1, got %d", o.n))
	}
	if o.size < 2 || o.resizeTo < 2 || o.size == o.resizeTo {
		// Below 2 the operator makes no PodDisruptionBudget, which changes
		// what a create costs; equal sizes make the resize storm a no-op.
		errs = append(errs, fmt.Errorf("-size (%d) and -resize-to (%d) must differ and be at least 2", o.size, o.resizeTo))
	}
	if o.unrelatedPods < 0 {
		errs = append(errs, fmt.Errorf("-pods must not be negative, got %d", o.unrelatedPods))
	}
	if o.idle <= 0 || o.rssWindow <= 0 || o.webhookDuration <= 0 || o.waitTimeout <= 0 {
		errs = append(errs, errors.New("-idle, -rss-window, -webhook-duration and -wait-timeout must be positive"))
	}
	errs = append(errs, o.realNodeErrors()...)
	if o.rssRepeats < 1 {
		errs = append(errs, fmt.Errorf("-rss-repeats must be at least 1, got %d", o.rssRepeats))
	}
	if o.webhookRate < 1 {
		errs = append(errs, fmt.Errorf("-webhook-rate must be at least 1, got %d", o.webhookRate))
	}
	if len(o.scenarios) == 0 {
		errs = append(errs, errors.New("-scenarios is empty"))
	}
	for _, s := range o.scenarios {
		if !slices.Contains(allScenarios(), s) {
			errs = append(errs, fmt.Errorf("unknown scenario %q: want some of %s", s, strings.Join(allScenarios(), ", ")))
		}
	}
	return errors.Join(errs...)
}

// realNodeErrors are the problems of the real node's scenarios' options.
func (o options) realNodeErrors() []error {
	var errs []error
	if o.memcachedPhase <= 0 || o.memcachedRounds < 1 || o.memcachedConnections < 1 {
		errs = append(errs, fmt.Errorf("-memcached-phase (%s), -memcached-rounds (%d) and -memcached-connections (%d) must be positive",
			o.memcachedPhase, o.memcachedRounds, o.memcachedConnections))
	}
	for _, m := range o.memorySizes {
		// The Memcached must be admitted: whole MiB, at least twice the
		// default maxItemSize.
		q, err := resource.ParseQuantity(m)
		if v, ok := q.AsInt64(); err != nil || !ok || v%(1<<20) != 0 || v < 2<<20 {
			errs = append(errs, fmt.Errorf("-memory-sizes: %q is not a whole number of MiB, at least 2Mi", m))
		}
	}
	if len(o.memorySizes) == 0 && o.wants(scenarioMemory) {
		errs = append(errs, errors.New("-memory-sizes is empty"))
	}
	if o.memoryTurnover <= 0 || o.memoryLargeFill <= 0 {
		errs = append(errs, fmt.Errorf("-memory-turnover (%g) and -memory-large-fill (%g) must be positive", o.memoryTurnover, o.memoryLargeFill))
	}
	if o.rolloutKeys < 2 || o.rolloutZipfS <= 1 || o.rolloutRate < 1 || o.rolloutSteady <= 0 || o.rolloutTail <= 0 || o.rolloutWarmupTimeout < 0 {
		errs = append(errs, fmt.Errorf("-rollout-keys (%d) must be at least 2, -rollout-zipf (%g) above 1, -rollout-rate (%d), -rollout-steady (%s) and -rollout-tail (%s) positive, -rollout-timeout (%s) not negative",
			o.rolloutKeys, o.rolloutZipfS, o.rolloutRate, o.rolloutSteady, o.rolloutTail, o.rolloutWarmupTimeout))
	}
	return errs
}

// wants reports whether scenario s runs: asked for, or needed by one that
// was. idle, resize and rss work on the set that converge creates.
func (o options) wants(s string) bool {
	if slices.Contains(o.scenarios, s) {
		return true
	}
	if s == scenarioConverge {
		return slices.ContainsFunc(o.scenarios, func(x string) bool {
			return x == scenarioIdle || x == scenarioResize || x == scenarioRSS
		})
	}
	return false
}

// controlPlane reports whether a scenario of the control plane's cluster
// runs: any but memcached, memory and rollout, which run on the real node.
func (o options) controlPlane() bool {
	return slices.ContainsFunc(o.scenarios, func(s string) bool {
		return s != scenarioMemcached && s != scenarioMemory && s != scenarioRollout
	})
}

// maxPods is the most pods the run puts on the cluster at once: the
// Memcached set at its larger size plus the unrelated pods. The floor's
// cluster gets as many nodes, so that the two differ only in the operator. The webhook
// scenario's objects are never reconciled, so they have no pods.
func (o options) maxPods() int {
	pods := 0
	if o.wants(scenarioConverge) || o.wants(scenarioFloor) {
		pods += o.n * int(max(o.size, o.resizeTo))
	}
	if o.wants(scenarioRSS) {
		pods += o.unrelatedPods
	}
	return pods
}

// defaultOutputs names, for each results file and plot not given, the file
// of its usual name in dir: docs/bench for the published run, the work
// directory for the smoke's.
func (o *options) defaultOutputs(dir string) {
	for _, f := range []struct {
		path *string
		name string
	}{
		{&o.out, "results.json"}, {&o.plot, "converge.svg"}, {&o.memcachedOut, "memcached.json"},
		{&o.memoryOut, "memory.json"}, {&o.rolloutOut, "rollout.json"}, {&o.rolloutPlot, "rollout.svg"},
	} {
		if *f.path == "" {
			*f.path = filepath.Join(dir, f.name)
		}
	}
}
