package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/google/pprof/profile"
)

// profileSlice is the length of one CPU profile request: the profiler
// stops within one slice of being asked to.
const profileSlice = 5 * time.Second

// profileTop is how many functions the results keep per profile.
const profileTop = 12

// profileResult is where the operator's time and memory went in a window,
// from Go's profiles: CPU over the window, the heap in use at its end, and
// the bytes allocated since the operator started.
type profileResult struct {
	CPUSeconds float64        `json:"cpuSeconds"`
	CPU        []profileEntry `json:"cpu"`
	// CPUByCum ranks by time spent in a function and what it calls, leaving
	// out the roots that hold nearly all of it (goroutine entry points).
	CPUByCum   []profileEntry `json:"cpuByCum"`
	InuseBytes int64          `json:"inuseBytes"`
	Inuse      []profileEntry `json:"inuse"`
	AllocBytes int64          `json:"allocBytes"`
	Alloc      []profileEntry `json:"alloc"`
}

// profileEntry is one function: its own share (flat) and its share with
// what it calls (cum), in the profile's unit (seconds or bytes).
type profileEntry struct {
	Function string  `json:"function"`
	Flat     float64 `json:"flat"`
	Cum      float64 `json:"cum"`
}

// cpuProfiler takes the operator's CPU profile in slices until stopped.
type cpuProfiler struct {
	url    string
	cancel context.CancelFunc
	done   chan struct{}
	slices []*profile.Profile
	err    error
}

// startCPUProfile starts profiling the process whose pprof endpoint is at
// addr (host:port).
func startCPUProfile(ctx context.Context, addr string) *cpuProfiler {
	ctx, cancel := context.WithCancel(ctx)
	p := &cpuProfiler{url: fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", addr, int(profileSlice.Seconds())),
		cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		for ctx.Err() == nil {
			// A slice runs to its end even when stop is called meanwhile:
			// the profile of a cancelled request is lost.
			prof, err := fetchProfile(context.WithoutCancel(ctx), p.url)
			if err != nil {
				p.err = err
				return
			}
			p.slices = append(p.slices, prof)
		}
	}()
	return p
}

// stop waits for the current slice and returns the merged profile.
func (p *cpuProfiler) stop() (*profile.Profile, error) {
	p.cancel()
	<-p.done
	if p.err != nil {
		return nil, p.err
	}
	if len(p.slices) == 0 {
		return nil, errors.New("no CPU profile taken")
	}
	return profile.Merge(p.slices)
}

// heapProfile is the heap profile of the process at addr after a GC: in use
// now, and allocated since it started.
func heapProfile(ctx context.Context, addr string) (*profile.Profile, error) {
	return fetchProfile(ctx, "http://"+addr+"/debug/pprof/heap?gc=1")
}

func fetchProfile(ctx context.Context, url string) (*profile.Profile, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return nil, fmt.Errorf("GET %s: %s: %s", url, resp.Status, body)
	}
	return profile.Parse(resp.Body)
}

// summarize is the top entries of the CPU and heap profiles, which it also
// writes to dir for `go tool pprof`.
func summarize(cpu, heap *profile.Profile, dir string) (*profileResult, error) {
	for name, p := range map[string]*profile.Profile{"cpu.pprof": cpu, "heap.pprof": heap} {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			return nil, err
		}
		err = errors.Join(p.Write(f), f.Close())
		if err != nil {
			return nil, err
		}
	}
	r := &profileResult{}
	var err error
	var total float64
	if r.CPU, total, err = top(cpu, "cpu", 1e-9); err != nil {
		return nil, err
	}
	r.CPUSeconds = total
	if r.CPUByCum, err = topByCum(cpu, "cpu", 1e-9, 0.9*total); err != nil {
		return nil, err
	}
	if r.Inuse, total, err = top(heap, "inuse_space", 1); err != nil {
		return nil, err
	}
	r.InuseBytes = int64(total)
	if r.Alloc, total, err = top(heap, "alloc_space", 1); err != nil {
		return nil, err
	}
	r.AllocBytes = int64(total)
	return r, nil
}

// top ranks the functions of p by their flat value of the sample type
// named sampleType, scaled by scale (CPU nanoseconds to seconds), and
// returns the first profileTop and the profile's total.
func top(p *profile.Profile, sampleType string, scale float64) ([]profileEntry, float64, error) {
	entries, total, err := functions(p, sampleType, scale)
	if err != nil {
		return nil, 0, err
	}
	slices.SortFunc(entries, func(a, b profileEntry) int {
		return cmp.Or(cmp.Compare(b.Flat, a.Flat), cmp.Compare(b.Cum, a.Cum), cmp.Compare(a.Function, b.Function))
	})
	return entries[:min(profileTop, len(entries))], total, nil
}

// topByCum ranks the functions whose cum is below maxCum by their cum.
func topByCum(p *profile.Profile, sampleType string, scale, maxCum float64) ([]profileEntry, error) {
	entries, _, err := functions(p, sampleType, scale)
	if err != nil {
		return nil, err
	}
	entries = slices.DeleteFunc(entries, func(e profileEntry) bool { return e.Cum >= maxCum })
	slices.SortFunc(entries, func(a, b profileEntry) int {
		return cmp.Or(cmp.Compare(b.Cum, a.Cum), cmp.Compare(a.Function, b.Function))
	})
	return entries[:min(profileTop, len(entries))], nil
}

// functions are every function of p with its flat and cum values of the
// sample type, and the profile's total.
func functions(p *profile.Profile, sampleType string, scale float64) ([]profileEntry, float64, error) {
	idx := slices.IndexFunc(p.SampleType, func(t *profile.ValueType) bool { return t.Type == sampleType })
	if idx < 0 {
		return nil, 0, fmt.Errorf("the profile has no %s samples", sampleType)
	}
	flat, cum := map[string]float64{}, map[string]float64{}
	var total float64
	for _, s := range p.Sample {
		v := float64(s.Value[idx]) * scale
		total += v
		seen := map[string]bool{}
		for i, loc := range s.Location {
			for j, line := range loc.Line {
				if line.Function == nil {
					continue
				}
				name := line.Function.Name
				// The leaf is the first line of the first location.
				if i == 0 && j == 0 {
					flat[name] += v
				}
				if !seen[name] {
					seen[name] = true
					cum[name] += v
				}
			}
		}
	}
	entries := make([]profileEntry, 0, len(cum))
	for name, c := range cum {
		entries = append(entries, profileEntry{Function: name, Flat: flat[name], Cum: c})
	}
	return entries, total, nil
}
