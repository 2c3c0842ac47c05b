package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// runInfo is what every results file says first: the run that wrote it.
type runInfo struct {
	Command         string    `json:"command"`
	StartedAt       time.Time `json:"startedAt"`
	DurationSeconds float64   `json:"durationSeconds"`
	Machine         machine   `json:"machine"`
}

// caseResults is what a scenario that runs cases alike writes: the run,
// Config the same for every case, each case, and the targets.
type caseResults[C, K any] struct {
	runInfo
	Config  C        `json:"config"`
	Cases   []K      `json:"cases"`
	Targets []target `json:"targets"`
}

// results is what -out holds. Durations are seconds, memory bytes.
type results struct {
	runInfo
	Config    runConfig       `json:"config"`
	Scenarios scenarioResults `json:"scenarios"`
	Targets   []target        `json:"targets"`
}

type runConfig struct {
	Objects           int      `json:"objects"`
	Size              int32    `json:"size"`
	ResizeTo          int32    `json:"resizeTo"`
	UnrelatedPods     int      `json:"unrelatedPods"`
	IdleSeconds       float64  `json:"idleSeconds"`
	RSSWindowSeconds  float64  `json:"rssWindowSeconds"`
	RSSRepeats        int      `json:"rssRepeats"`
	WebhookRate       int      `json:"webhookRatePerSecond"`
	WebhookSeconds    float64  `json:"webhookSeconds"`
	FakeNodes         int      `json:"fakeNodes"`
	Scenarios         []string `json:"scenarios"`
	OperatorExtraArgs []string `json:"operatorExtraArgs,omitempty"`
	Smoke             bool     `json:"smoke"`
}

type scenarioResults struct {
	Floor    *floorResult    `json:"floor,omitempty"`
	Converge *convergeResult `json:"converge,omitempty"`
	Idle     *idleResult     `json:"idle,omitempty"`
	Resize   *convergeResult `json:"resize,omitempty"`
	RSS      *rssResult      `json:"rss,omitempty"`
	Webhook  *webhookResult  `json:"webhook,omitempty"`
	// Errors holds the scenarios that could not complete, with why.
	Errors map[string]string `json:"errors,omitempty"`
}

// convergeResult is the converge scenario (size 0 -> size) and the resize
// storm (size -> resizeTo): a request per object, then a wait for all of them
// to be Available at the new size.
type convergeResult struct {
	Objects  int   `json:"objects"`
	FromSize int32 `json:"fromSize,omitempty"`
	ToSize   int32 `json:"toSize"`
	// RequestSeconds is how long the bench took to send every create or
	// resize; ConvergeSeconds from the first request to the last object
	// Available; SettledSeconds to the operator being idle again.
	RequestSeconds  float64 `json:"requestSeconds"`
	ConvergeSeconds float64 `json:"convergeSeconds"`
	SettledSeconds  float64 `json:"settledSeconds"`
	// PerObject is each object's time from its request to Available.
	PerObject quantiles `json:"perObjectSeconds"`
	// Operator CPU over the window; RSS when it settled (peak since start),
	// and how much of it mapped files then.
	OperatorCPUSeconds   float64 `json:"operatorCPUSeconds"`
	OperatorRSSBytes     int64   `json:"operatorRSSBytes"`
	OperatorPeakRSSBytes int64   `json:"operatorPeakRSSBytes"`
	OperatorFileRSSBytes int64   `json:"operatorFileRSSBytes,omitempty"`
	// Reconciles ran in the window, from the operator's own metrics.
	Reconciles float64 `json:"reconciles,omitempty"`
	// APIServerCPUSeconds is kube-apiserver's CPU from the first request
	// to the last object Available, the floor's window.
	APIServerCPUSeconds float64 `json:"apiServerCPUSeconds,omitempty"`
	// Admission is kube-apiserver's histogram of the webhook calls in the
	// window, by webhook; PodCreates its own latency of the pod creates in
	// the window (apiserver_request_duration_seconds), requests no webhook
	// sees: how long the saturated API server takes over anything.
	Admission  []webhookLatency `json:"admission,omitempty"`
	PodCreates *webhookLatency  `json:"podCreates,omitempty"`
	// Requests are every request the operator made in the window, Writes
	// the writes among them.
	Requests        requestCounts `json:"requests"`
	Writes          requestCounts `json:"writes"`
	WritesPerObject float64       `json:"writesPerObject"`
	// WritesPerObjectWithoutEvents leaves out events.k8s.io writes.
	WritesPerObjectWithoutEvents float64 `json:"writesPerObjectWithoutEvents"`
	// OwnedObjects is what each Memcached owns: Deployment, Service, PDB.
	OwnedObjects int `json:"ownedObjects,omitempty"`
	// Profile is where the operator's CPU and memory went (converge only).
	Profile *profileResult `json:"profile,omitempty"`
	// ClientRequestsByMethod is the operator's rest_client_requests_total
	// over the window (to when the bench read it, just after settling), a
	// cross-check of the audit log's count.
	ClientRequestsByMethod map[string]float64 `json:"clientRequestsByMethod"`
	// ConvergedAt are the seconds from the first request at which each
	// object converged, sorted: the plot's curve.
	ConvergedAt []float64 `json:"convergedAtSeconds"`
}

// floorResult is the floor scenario: the converge's Deployments, Services
// and PDBs applied with no operator, on a cluster of their own.
type floorResult struct {
	// Objects is the number of Memcached whose objects were applied,
	// ObjectsPerMemcached how many each has.
	Objects             int   `json:"objects"`
	ObjectsPerMemcached int   `json:"objectsPerMemcached"`
	Size                int32 `json:"size"`
	// RequestSeconds is how long the applies took; ConvergeSeconds from
	// the first apply to the last Deployment Available.
	RequestSeconds  float64   `json:"requestSeconds"`
	ConvergeSeconds float64   `json:"convergeSeconds"`
	PerObject       quantiles `json:"perObjectSeconds"`
	// APIServerCPUSeconds is kube-apiserver's CPU over the same window.
	APIServerCPUSeconds float64 `json:"apiServerCPUSeconds"`
	// ConvergedAt are the seconds from the first apply at which each
	// Deployment became Available, sorted: the plot's second curve.
	ConvergedAt []float64 `json:"convergedAtSeconds"`
}

type quantiles struct {
	P50 float64 `json:"p50"`
	P90 float64 `json:"p90"`
	P99 float64 `json:"p99"`
	Max float64 `json:"max"`
}

// sampleQuantiles reads quantiles off sorted values (nearest rank).
func sampleQuantiles(sorted []float64) quantiles {
	if len(sorted) == 0 {
		return quantiles{}
	}
	at := func(q float64) float64 {
		i := int(math.Ceil(q*float64(len(sorted)))) - 1
		return sorted[min(max(i, 0), len(sorted)-1)]
	}
	return quantiles{P50: at(0.5), P90: at(0.9), P99: at(0.99), Max: sorted[len(sorted)-1]}
}

type idleResult struct {
	WindowSeconds float64       `json:"windowSeconds"`
	Requests      requestCounts `json:"requests"`
	Writes        requestCounts `json:"writes"`
	// LeaseWrites are leader-election writes (none: the bench runs one
	// replica without leader election); OtherWrites the rest, target 0.
	LeaseWrites int `json:"leaseWrites"`
	OtherWrites int `json:"otherWrites"`
	// Reconciles ran in the window, from the operator's own metrics.
	Reconciles float64 `json:"reconciles"`
	// ClientRequestsByMethod is the operator's rest_client_requests_total
	// over the window, a cross-check of the audit log's count.
	ClientRequestsByMethod map[string]float64 `json:"clientRequestsByMethod"`
	OperatorCPUSeconds     float64            `json:"operatorCPUSeconds"`
	OperatorRSSBytes       int64              `json:"operatorRSSBytes"`
}

type rssResult struct {
	UnrelatedPods int `json:"unrelatedPods"`
	// PodsReadySeconds is how long the unrelated pods took to be ready.
	PodsReadySeconds float64    `json:"podsReadySeconds"`
	WithoutPods      rssSummary `json:"withoutPods"`
	WithPods         rssSummary `json:"withPods"`
	// Ratios are with / without, of the medians.
	PeakRatio     float64 `json:"peakRatio"`
	SteadyRatio   float64 `json:"steadyRatio"`
	HeapRatio     float64 `json:"heapRatio"`
	HeapGoalRatio float64 `json:"heapGoalRatio"`
}

// rssSummary is the medians of several fresh starts in one cluster state.
type rssSummary struct {
	PeakRSSBytes      int64   `json:"peakRSSBytes"`
	SteadyRSSBytes    int64   `json:"steadyRSSBytes"`
	HeapInuseBytes    int64   `json:"heapInuseBytes"`
	HeapGoalBytes     int64   `json:"heapGoalBytes"`
	StartupSeconds    float64 `json:"startupSeconds"`
	StartupCPUSeconds float64 `json:"startupCPUSeconds"`
	// Writes is the total over all runs: a restart over a converged set
	// should cost none.
	Writes int         `json:"writes"`
	Runs   []rssSample `json:"runs"`
}

// rssSample is one fresh start of the operator over the converged set.
type rssSample struct {
	// StartupSeconds is from process start to settled (every object
	// reconciled once, queue empty).
	StartupSeconds    float64 `json:"startupSeconds"`
	StartupCPUSeconds float64 `json:"startupCPUSeconds"`
	Reconciles        float64 `json:"reconciles"`
	// PeakRSSBytes is VmHWM at the end of the window; SteadyRSSBytes the
	// largest VmRSS sampled in the window after settling; HeapInuseBytes
	// the Go heap in use at its end, which swings with the garbage
	// collector's cycle; HeapGoalBytes the collector's next target, twice
	// the heap that was live at the last collection (GOGC=100), the
	// steadiest measure of what the operator holds.
	PeakRSSBytes   int64 `json:"peakRSSBytes"`
	SteadyRSSBytes int64 `json:"steadyRSSBytes"`
	HeapInuseBytes int64 `json:"heapInuseBytes"`
	HeapGoalBytes  int64 `json:"heapGoalBytes"`
	// Writes the restarted operator made.
	Writes requestCounts `json:"writes"`
}

type webhookResult struct {
	RatePerSecond   int     `json:"ratePerSecond"`
	DurationSeconds float64 `json:"durationSeconds"`
	// Creates sent and failed in each phase.
	Creates         int `json:"creates"`
	CreateErrors    int `json:"createErrors"`
	BaselineCreates int `json:"baselineCreates"`
	// Webhooks are kube-apiserver's apiserver_admission_webhook_admission_duration_seconds
	// over the measured phase, by webhook.
	Webhooks []webhookLatency `json:"webhooks"`
	// BucketBounds are that histogram's bucket bounds, which limit what
	// its quantiles can say.
	BucketBounds []float64 `json:"bucketBounds"`
	// Handler is the operator's own controller_runtime_webhook_latency_seconds.
	Handler []webhookLatency `json:"handler"`
	// ClientWith and ClientWithout are the create latencies the bench saw
	// with the webhooks and without any (same rate, no operator watching).
	ClientWith    quantiles `json:"clientCreateSecondsWith"`
	ClientWithout quantiles `json:"clientCreateSecondsWithout"`
	// SerialCreates were sent one after another, each when the last was
	// answered (a kubectl create loop), taking SerialSecondsWith through
	// the webhooks and SerialSecondsWithout with none.
	SerialCreates        int     `json:"serialCreates,omitempty"`
	SerialSecondsWith    float64 `json:"serialSecondsWith,omitempty"`
	SerialSecondsWithout float64 `json:"serialSecondsWithout,omitempty"`
	// The operator's CPU over the measured phase, and its RSS at the end.
	OperatorCPUSeconds float64 `json:"operatorCPUSeconds"`
	OperatorRSSBytes   int64   `json:"operatorRSSBytes"`
}

type webhookLatency struct {
	Name  string  `json:"name"`
	Type  string  `json:"type,omitempty"`
	Calls float64 `json:"calls"`
	// P50 and P99 are interpolated as histogram_quantile does;
	// P99Bucket is the upper bound of the bucket holding the 99th
	// percentile, the most the histogram can assert.
	P50       float64 `json:"p50Seconds"`
	P99       float64 `json:"p99Seconds"`
	P99Bucket float64 `json:"p99BucketSeconds"`
	// Within5ms is the share of calls in buckets up to 5 ms.
	Within5ms float64 `json:"within5ms"`
}

// target is one of the targets and whether this run met it.
type target struct {
	Name   string `json:"name"`
	Target string `json:"target"`
	Value  string `json:"value"`
	Met    bool   `json:"met"`
	// Counted targets (writes, reconciles) do not depend on how loaded
	// the machine is, so a smoke run fails when one is missed; timed ones
	// are only reported.
	Counted bool `json:"counted"`
}

// MarshalJSON writes NaN and infinities, which JSON lacks, as null.
func (w webhookLatency) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Name      string   `json:"name"`
		Type      string   `json:"type,omitempty"`
		Calls     float64  `json:"calls"`
		P50       *float64 `json:"p50Seconds"`
		P99       *float64 `json:"p99Seconds"`
		P99Bucket *float64 `json:"p99BucketSeconds"`
		Within5ms *float64 `json:"within5ms"`
	}{w.Name, w.Type, w.Calls, finite(w.P50), finite(w.P99), finite(w.P99Bucket), finite(w.Within5ms)})
}

// finite is f, or nil when JSON cannot hold it.
func finite(f float64) *float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil
	}
	return &f
}

func writeJSON(path string, r any) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}

// table prints one row per scenario as each completes, in fixed-width
// columns so that rows printed minutes apart line up.
type table struct {
	w io.Writer
}

const tableFormat = "%-9s %7s %8s %9s %10s %9s  %s\n"

func newTable(out io.Writer) *table {
	t := &table{w: out}
	_, _ = fmt.Fprintf(out, tableFormat, "SCENARIO", "OBJECTS", "SECONDS", "OP CPU s", "OP RSS MiB", "OP WRITES", "DETAIL")
	return t
}

func (t *table) row(scenario string, objects int, seconds, cpu float64, rss int64, writes int, detail string) {
	_, _ = fmt.Fprintf(t.w, tableFormat, scenario, fmt.Sprint(objects), fmt.Sprintf("%.1f", seconds),
		fmt.Sprintf("%.1f", cpu), fmt.Sprintf("%.1f", mib(rss)), fmt.Sprint(writes), detail)
}

func (t *table) failed(scenario string, err error) {
	_, _ = fmt.Fprintf(t.w, tableFormat, scenario, "-", "-", "-", "-", "-", "FAILED: "+firstLine(err.Error()))
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// machine describes where the figures were measured.
type machine struct {
	CPUs          int     `json:"cpus"`
	CPUModel      string  `json:"cpuModel"`
	MemoryGiB     float64 `json:"memoryGiB"`
	Kernel        string  `json:"kernel"`
	GoVersion     string  `json:"goVersion"`
	Kubernetes    string  `json:"kubernetes"`
	LoadAvgBefore string  `json:"loadAverageBefore"`
	LoadAvgAfter  string  `json:"loadAverageAfter"`
}

func describeMachine() machine {
	m := machine{CPUs: runtime.NumCPU(), GoVersion: runtime.Version()}
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.SplitSeq(string(data), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPUModel = strings.TrimSpace(v)
				break
			}
		}
	}
	if data, err := os.ReadFile("/proc/meminfo"); err == nil {
		for line := range strings.SplitSeq(string(data), "\n") {
			var kb float64
			if _, err := fmt.Sscanf(line, "MemTotal: %f kB", &kb); err == nil {
				m.MemoryGiB = math.Round(kb/(1<<20)*10) / 10
			}
		}
	}
	if data, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(data))
	}
	m.LoadAvgBefore = loadAverage()
	return m
}

// loadAverage is the 1, 5 and 15 minute load averages: on a shared machine,
// how much else was running.
func loadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}
