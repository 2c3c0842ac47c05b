package main

import (
	"strings"
	"testing"
)

// A filled memcached that the kernel killed, that restarted, or that never
// evicted fails the scenario; one that merely came close to its limit
// misses the target but fails nothing, and one above its request but well
// under its limit meets it (the limit is what holds a burst).
func TestMemoryCaseFailures(t *testing.T) {
	filled := func(mod func(*memoryCase)) memoryCase {
		c := memoryCase{Name: "64Mi", MemoryBytes: 64 << 20, OverheadBytes: 32 << 20, Cgroup: memoryFigures{LimitBytes: 128 << 20, PeakBytes: 80 << 20},
			Stats: map[string]string{"evictions": "12345", "limit_maxbytes": "67108864"}}
		mod(&c)
		return c
	}
	for _, tc := range []struct {
		name      string
		c         memoryCase
		fails     string
		targetMet bool
	}{
		{"evicted, well under its limit", filled(func(*memoryCase) {}), "", true},
		{"above its request, well under its limit", filled(func(c *memoryCase) { c.Cgroup.PeakBytes = 100 << 20 }), "", true},
		{"close to its limit", filled(func(c *memoryCase) { c.Cgroup.PeakBytes, c.OverheadBytes = 120<<20, 64<<20 }), "", false},
		{"killed by the kernel", filled(func(c *memoryCase) { c.Cgroup.OOMKills = 1 }), "OOM-killed", false},
		{"restarted after an OOM kill", filled(func(c *memoryCase) { c.Restarts, c.LastTermination = 1, "OOMKilled" }),
			"OOM-killed, 1 restarts (last: OOMKilled)", false},
		{"never evicted", filled(func(c *memoryCase) { c.Stats["evictions"] = "0" }), "no evictions", false},
		{"broken connections", filled(func(c *memoryCase) { c.Error = "large items: connection 7: EOF"; c.Stats = nil }),
			"large items: connection 7: EOF", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &memoryResults{Cases: []memoryCase{tc.c}}
			want := ""
			if tc.fails != "" {
				want = "64Mi: " + tc.fails
			}
			if got := strings.Join(memoryFailures(r), "; "); got != want {
				t.Errorf("failures = %q, want %q", got, want)
			}
			if targets := evaluateMemoryTargets(r); len(targets) != 1 || targets[0].Met != tc.targetMet {
				t.Errorf("targets = %+v, want met %v", targets, tc.targetMet)
			}
		})
	}
}

func TestMemoryFills(t *testing.T) {
	o := parsed(t, "-scenarios", "memory")
	var names []string
	for _, f := range o.memoryFills() {
		names = append(names, f.caseName()+"="+f.objectName())
	}
	if got, want := strings.Join(names, ","), "64Mi=fill-64mi,256Mi=fill-256mi,1Gi=fill-1gi,64Mi with TLS=fill-64mi-tls,64Mi with TLS, maxConnections 4096=fill-64mi-tls-4096"; got != want {
		t.Errorf("fills = %s, want %s", got, want)
	}
	if o.controlPlane() {
		t.Error("memory alone needs no control-plane cluster")
	}
	o = parsed(t, "-smoke")
	if !o.wants(scenarioMemory) || len(o.memoryFills()) != 1 || o.memoryFills()[0].memory != "64Mi" || o.memoryFills()[0].tls {
		t.Errorf("a smoke run should fill one 64Mi Memcached without TLS, got %+v", o.memoryFills())
	}
	for _, bad := range []string{"64M", "1.5Mi", "1Mi", "x"} {
		if _, err := parseOptions([]string{"-memory-sizes", bad}); err == nil {
			t.Errorf("-memory-sizes %s was accepted", bad)
		}
	}
}

func TestTLSCostPerConnection(t *testing.T) {
	cases := []memoryCase{
		{Memory: "64Mi", MaxConnections: 1024, Cgroup: memoryFigures{PeakBytes: 80 << 20}},
		{Memory: "256Mi", MaxConnections: 1024, Cgroup: memoryFigures{PeakBytes: 300 << 20}},
		{Memory: "64Mi", MaxConnections: 1024, TLS: true, Cgroup: memoryFigures{PeakBytes: 96 << 20, LimitBytes: 176 << 20},
			Fill: fillResult{Connections: 1024}},
		{Memory: "64Mi", MaxConnections: 4096, TLS: true, Cgroup: memoryFigures{PeakBytes: 159 << 20, LimitBytes: 368 << 20},
			Fill: fillResult{Connections: 4032}},
	}
	want := "Serving TLS, the 64Mi Memcached peaked 16.0 MiB higher with 1,024 connections open: 16.0 KiB more per connection. " +
		"Each TLS connection open beyond 1,024 cost 21.4 KiB (4,032 connections against 1,024); the derived limit keeps 64.0 KiB per connection over TLS."
	if got := tlsCost(cases); got != want {
		t.Errorf("tlsCost =\n%q, want\n%q", got, want)
	}
	if got := tlsCost(cases[:2]); got != "" {
		t.Errorf("without a TLS case: %q", got)
	}
}
