package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
	"github.com/example-inc/memcached-operator/test/framework/manifest"
	"github.com/example-inc/memcached-operator/test/framework/operatorproc"
)

func main() {
	o, err := parseOptions(os.Args[1:])
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(2)
	}
	if o.render {
		if err := render(o); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		fmt.Printf("bench: %s, %s and %s rewritten from %s, %s, %s and %s\n", o.doc, o.plot, o.rolloutPlot, o.out, o.memcachedOut, o.memoryOut, o.rolloutOut)
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// bench is one run: the cluster, the operator process of the moment, the
// tracker of the Memcached set and the results so far.
type bench struct {
	o   options
	dir string
	e   *env
	bin string
	// deployedEnv is what the manager's Deployment sets from its resources
	// (MEMORY_LIMIT): every operator the bench starts runs with
	// it, as deployed.
	deployedEnv []string
	op          *operator
	track       *tracker
	res         *results
	// memcachedRes, memoryRes and rolloutRes are the real node's
	// scenarios', which have files of their own.
	memcachedRes *memcachedResults
	memoryRes    *memoryResults
	rolloutRes   *rolloutResults
	// node is the cluster with the real node, while the scenarios that
	// use it run.
	node  *realNode
	table *table
	// settledAt is when the operator last went idle: the start of the
	// idle window.
	settledAt time.Time
}

func run(ctx context.Context, o options) (err error) {
	dir := o.workDir
	if dir == "" {
		if dir, err = os.MkdirTemp("", "memcached-bench-"); err != nil {
			return err
		}
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return err
	}
	if o.smoke {
		o.defaultOutputs(dir)
	}
	start := time.Now()
	b := &bench{o: o, dir: dir, res: &results{
		runInfo: runInfo{
			Command:   "go -C test run ./bench " + strings.Join(os.Args[1:], " "),
			StartedAt: start.UTC().Truncate(time.Second),
			Machine:   describeMachine(),
		},
		Config: runConfig{
			Objects: o.n, Size: o.size, ResizeTo: o.resizeTo, UnrelatedPods: o.unrelatedPods,
			IdleSeconds: o.idle.Seconds(), RSSWindowSeconds: o.rssWindow.Seconds(), RSSRepeats: o.rssRepeats,
			WebhookRate: o.webhookRate, WebhookSeconds: o.webhookDuration.Seconds(),
			Scenarios: o.scenarios, OperatorExtraArgs: o.operatorArgs, Smoke: o.smoke,
		},
	}}
	fmt.Printf("bench: work directory %s (cluster logs, operator.log, audit.log, bench.log)\n", dir)
	// The bench's informer and clients log through controller-runtime.
	logFile, err := os.Create(filepath.Join(dir, "bench.log"))
	if err != nil {
		return err
	}
	defer func() { _ = logFile.Close() }()
	ctrllog.SetLogger(zap.New(zap.WriteTo(logFile)))
	defer func() {
		err = errors.Join(err, b.shutdown())
		if err != nil || o.keep {
			fmt.Printf("bench: kept %s\n", dir)
		} else if o.workDir == "" {
			_ = os.RemoveAll(dir)
			fmt.Printf("bench: removed %s (-keep keeps it)\n", dir)
		}
	}()
	b.table = newTable(os.Stdout)
	failed, built, err := b.runRealNode(ctx)
	if err != nil {
		return err
	}
	if !o.controlPlane() {
		return incomplete(failed)
	}
	if o.wants(scenarioFloor) {
		failed = b.runStep(ctx, failed, scenarioFloor, func(ctx context.Context) error { return b.floor(ctx, built) })
	}
	if err := b.setUp(ctx, built); err != nil {
		return err
	}
	failed = append(failed, b.runScenarios(ctx)...)

	b.res.DurationSeconds = time.Since(start).Seconds()
	b.res.Machine.LoadAvgAfter = loadAverage()
	b.res.Targets = evaluateTargets(b.res)
	printTargets(os.Stdout, b.res.Targets)
	if err := writeJSON(o.out, b.res); err != nil {
		return fmt.Errorf("writing %s: %w", o.out, err)
	}
	if err := writePlot(o.plot, b.res); err != nil {
		return fmt.Errorf("writing %s: %w", o.plot, err)
	}
	if o.doc != "" {
		if err := updateSection(o.doc, controlPlaneSection, report(b.res)); err != nil {
			return err
		}
	}
	fmt.Printf("bench: results in %s, plot in %s (%.0fs)\n", o.out, o.plot, b.res.DurationSeconds)
	if err := incomplete(failed); err != nil {
		return err
	}
	// A smoke run is small and on a loaded machine, so times mean little,
	// but counts do not depend on either.
	if missed := missedCounted(b.res.Targets); o.smoke && len(missed) > 0 {
		return fmt.Errorf("counted targets missed: %s", strings.Join(missed, "; "))
	}
	return nil
}

func incomplete(failed []string) error {
	if len(failed) == 0 {
		return nil
	}
	return fmt.Errorf("scenarios that did not complete: %s", strings.Join(failed, ", "))
}

// runRealNode runs the scenarios of the real node, memcached, memory and
// rollout, publishes their results, and stops the node. It starts the
// operator's build when a later scenario needs it, and returns the scenarios
// that failed and the wait for the build (nil when none started).
func (b *bench) runRealNode(ctx context.Context) (failed []string, built func() error, err error) {
	for _, s := range []struct {
		name    string
		run     func(context.Context) error
		publish func() error
	}{
		{scenarioMemcached, b.memcached, b.writeMemcached},
		{scenarioMemory, func(ctx context.Context) error { return b.memory(ctx, built) }, b.writeMemory},
		{scenarioRollout, func(ctx context.Context) error { return b.rollout(ctx, built) }, b.writeRollout},
	} {
		// The operator builds while nothing is measured: after the memcached
		// scenario, whose throughput a build would disturb.
		if s.name == scenarioMemory && (b.o.wants(scenarioMemory) || b.o.wants(scenarioRollout) || b.o.controlPlane()) {
			built = b.build(ctx)
		}
		if !b.o.wants(s.name) {
			continue
		}
		failed = b.runStep(ctx, failed, s.name, s.run)
		if err := s.publish(); err != nil {
			return nil, nil, err
		}
	}
	if err := b.stopRealNode(); err != nil {
		return nil, nil, fmt.Errorf("stopping the real node: %w", err)
	}
	return failed, built, nil
}

// build starts building the operator and returns a function that waits for
// the build's end.
func (b *bench) build(ctx context.Context) func() error {
	built := make(chan error, 1)
	go func() {
		var err error
		if b.deployedEnv, err = manifest.ManagerResourceEnv(); err != nil {
			built <- err
			return
		}
		b.bin, err = operatorproc.Build(ctx, filepath.Join(b.dir, "manager"))
		built <- err
	}()
	return sync.OnceValue(func() error { return <-built })
}

// setUp starts the cluster while the operator builds, then starts the
// operator, serving its webhooks as a cluster's would, and the tracker if
// the Memcached set is needed.
func (b *bench) setUp(ctx context.Context, built func() error) error {
	start := time.Now()
	var err error
	b.e, err = startEnv(ctx, b.o, b.dir)
	if buildErr := built(); buildErr != nil {
		return errors.Join(buildErr, err)
	}
	if err != nil {
		return err
	}
	b.res.Config.FakeNodes = b.e.nodes
	if v, err := b.e.cs.Discovery().ServerVersion(); err == nil {
		b.res.Machine.Kubernetes = v.GitVersion
	}
	fmt.Printf("bench: cluster with %d fake nodes up and operator built in %.1fs\n", b.e.nodes, time.Since(start).Seconds())
	if !b.o.wants(scenarioConverge) {
		return nil
	}
	if b.track, err = startTracker(ctx, b.e, setNamespace, memcacheds()); err != nil {
		return err
	}
	if b.op, err = b.startOperator(ctx, true, ""); err != nil {
		return err
	}
	return b.waitForWebhooks(ctx)
}

// runScenarios runs every wanted scenario after the floor in order and
// returns the names of those that failed.
func (b *bench) runScenarios(ctx context.Context) []string {
	steps := []struct {
		name string
		run  func(context.Context) error
	}{
		{scenarioConverge, b.converge},
		{scenarioIdle, b.idle},
		{scenarioResize, b.resize},
		{scenarioRSS, b.rss},
		{scenarioWebhook, b.webhook},
	}
	var failed []string
	for _, s := range steps {
		if !b.o.wants(s.name) {
			continue
		}
		run := s.run
		if s.name != scenarioConverge && s.name != scenarioWebhook && b.res.Scenarios.Converge == nil {
			run = func(context.Context) error {
				return errors.New("needs the converged Memcached set, and converge failed")
			}
		}
		failed = b.runStep(ctx, failed, s.name, run)
	}
	return failed
}

// runStep runs scenario name and records how it failed, if it did, in the
// results, the table and failed, which it returns.
func (b *bench) runStep(ctx context.Context, failed []string, name string, run func(context.Context) error) []string {
	progress("running %s", name)
	err := ctx.Err()
	if err == nil {
		err = run(ctx)
	}
	if err == nil {
		return failed
	}
	if b.res.Scenarios.Errors == nil {
		b.res.Scenarios.Errors = map[string]string{}
	}
	b.res.Scenarios.Errors[name] = err.Error()
	b.table.failed(name, err)
	fmt.Fprintf(os.Stderr, "bench: %s: %v\n", name, err)
	return append(failed, name)
}

func (b *bench) shutdown() error {
	return errors.Join(b.stopRealNode(), b.op.stop(), b.e.stop())
}

// progress tells whoever watches a long run where it is, on stderr so that
// stdout stays the table.
func progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench: %s %s\n", time.Now().Format(time.TimeOnly), fmt.Sprintf(format, args...))
}

// writeMemcached, writeMemory and writeRollout complete the results a real
// node's scenario left, if any, and publish them.
func (b *bench) writeMemcached() error {
	r := b.memcachedRes
	if r == nil {
		return nil
	}
	b.describeRun(&r.runInfo)
	r.DurationSeconds = time.Since(b.res.StartedAt).Seconds()
	r.Targets = evaluateMemcachedTargets(r)
	return b.publish(scenarioMemcached, b.o.memcachedOut, r, r.Targets, memcachedSection, memcachedReport(r))
}

func (b *bench) writeMemory() error {
	r := b.memoryRes
	if r == nil {
		return nil
	}
	b.describeRun(&r.runInfo)
	r.Targets = evaluateMemoryTargets(r)
	return b.publish(scenarioMemory, b.o.memoryOut, r, r.Targets, memorySection, memoryReport(r))
}

func (b *bench) writeRollout() error {
	r := b.rolloutRes
	if r == nil {
		return nil
	}
	b.describeRun(&r.runInfo)
	r.Targets = evaluateRolloutTargets(r, cachev1.RolloutPacingWarmth, cachev1.RolloutPacingNone)
	if err := writeRolloutPlot(b.o.rolloutPlot, r); err != nil {
		return fmt.Errorf("writing %s: %w", b.o.rolloutPlot, err)
	}
	return b.publish(scenarioRollout, b.o.rolloutOut, r, r.Targets, rolloutSection, rolloutReport(r))
}

// describeRun gives a real node's scenario's results the run's command,
// start and machine, with the load average now; the scenario set their
// duration.
func (b *bench) describeRun(r *runInfo) {
	duration := r.DurationSeconds
	*r = b.res.runInfo
	r.DurationSeconds = duration
	r.Machine.LoadAvgAfter = loadAverage()
}

// publish prints a real node's scenario's targets and writes its results
// r to their file and report to their section of the document.
func (b *bench) publish(name, path string, r any, targets []target, sec section, report string) error {
	printTargets(os.Stdout, targets)
	if err := writeJSON(path, r); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if b.o.doc != "" {
		if err := updateSection(b.o.doc, sec, report); err != nil {
			return err
		}
	}
	fmt.Printf("bench: %s results in %s\n", name, path)
	return nil
}

// render rewrites the document's sections and the plots from the results
// files.
func render(o options) error {
	doc, err := os.ReadFile(o.doc)
	if err != nil {
		return err
	}
	r, roll := &results{}, &rolloutResults{}
	if err := errors.Join(readJSON(o.out, r), readJSON(o.rolloutOut, roll)); err != nil {
		return err
	}
	if doc, err = rendered(doc, o); err != nil {
		return err
	}
	return errors.Join(os.WriteFile(o.doc, doc, 0o644), writePlot(o.plot, r), writeRolloutPlot(o.rolloutPlot, roll))
}

// rendered is doc with every generated section rewritten from its results
// file.
func rendered(doc []byte, o options) ([]byte, error) {
	r, m, mem, roll := &results{}, &memcachedResults{}, &memoryResults{}, &rolloutResults{}
	if err := errors.Join(readJSON(o.out, r), readJSON(o.memcachedOut, m), readJSON(o.memoryOut, mem), readJSON(o.rolloutOut, roll)); err != nil {
		return nil, err
	}
	for _, s := range []struct {
		sec  section
		text string
	}{
		{controlPlaneSection, report(r)},
		{memcachedSection, memcachedReport(m)},
		{memorySection, memoryReport(mem)},
		{rolloutSection, rolloutReport(roll)},
	} {
		var err error
		if doc, err = s.sec.replace(doc, s.text); err != nil {
			return nil, fmt.Errorf("%s: %w", o.doc, err)
		}
	}
	return doc, nil
}
