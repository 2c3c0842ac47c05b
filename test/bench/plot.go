package main

import (
	"fmt"
	"html"
	"math"
	"os"
	"path/filepath"
	"strings"
)

// The plot's geometry, in SVG user units.
const (
	plotWidth, plotHeight = 800, 460
	marginLeft            = 70
	marginRight           = 30
	marginTop             = 50
	marginBottom          = 55
)

// series is one curve of the plot: the seconds at which each object
// converged, sorted; point i is (times[i], i+1).
type series struct {
	label string
	color string
	times []float64
}

// writePlot draws the objects converged over time of the floor, converge
// and resize scenarios as a hand-written SVG: no plotting dependency, and
// the file diffs as text.
func writePlot(path string, r *results) error {
	var all []series
	if f := r.Scenarios.Floor; f != nil {
		all = append(all, series{"floor: the same objects, no operator (Deployments Available)", "#7f7f7f", f.ConvergedAt})
	}
	if c := r.Scenarios.Converge; c != nil {
		all = append(all, series{fmt.Sprintf("converge: create %d (size %d)", c.Objects, c.ToSize), "#1f77b4", c.ConvergedAt})
	}
	if c := r.Scenarios.Resize; c != nil {
		all = append(all, series{fmt.Sprintf("resize storm: %d objects %d -> %d", c.Objects, c.FromSize, c.ToSize), "#d62728", c.ConvergedAt})
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(plotSVG(all, r.Machine)), 0o644)
}

func plotSVG(all []series, m machine) string {
	maxT, maxN := 0.0, 0
	for _, s := range all {
		if len(s.times) > 0 {
			maxT = math.Max(maxT, s.times[len(s.times)-1])
		}
		maxN = max(maxN, len(s.times))
	}
	xStep := niceStep(maxT, 8)
	yStep := niceStep(float64(maxN), 5)
	xMax := math.Max(xStep, math.Ceil(maxT/xStep)*xStep)
	yMax := math.Max(yStep, math.Ceil(float64(maxN)/yStep)*yStep)
	innerW := float64(plotWidth - marginLeft - marginRight)
	innerH := float64(plotHeight - marginTop - marginBottom)
	x := func(t float64) float64 { return marginLeft + t/xMax*innerW }
	y := func(n float64) float64 { return marginTop + innerH - n/yMax*innerH }

	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n",
		plotWidth, plotHeight, plotWidth, plotHeight)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", plotWidth, plotHeight)
	fmt.Fprintf(&b, `<text x="%d" y="22" font-size="15" font-weight="bold">Memcached objects Available over time</text>`+"\n", marginLeft)
	fmt.Fprintf(&b, `<text x="%d" y="38" fill="#555">%s</text>`+"\n", marginLeft,
		html.EscapeString(fmt.Sprintf("%d CPUs, %.0f GiB, Kubernetes %s (local cluster, kwok nodes)", m.CPUs, m.MemoryGiB, m.Kubernetes)))

	// Grid and ticks.
	for t := 0.0; t <= xMax+xStep/2; t += xStep {
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%.1f" stroke="#e5e5e5"/>`+"\n", x(t), marginTop, x(t), y(0))
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`+"\n", x(t), y(0)+16, formatTick(t))
	}
	for n := 0.0; n <= yMax+yStep/2; n += yStep {
		fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#e5e5e5"/>`+"\n", marginLeft, y(n), x(xMax), y(n))
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="end">%s</text>`+"\n", marginLeft-6, y(n)+4, formatTick(n))
	}
	fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%.1f" y2="%.1f" stroke="black"/>`+"\n", marginLeft, y(0), x(xMax), y(0))
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%.1f" stroke="black"/>`+"\n", marginLeft, marginTop, marginLeft, y(0))
	fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">seconds since the first request</text>`+"\n",
		x(xMax/2), plotHeight-12)
	fmt.Fprintf(&b, `<text x="16" y="%.1f" text-anchor="middle" transform="rotate(-90 16 %.1f)">objects Available at the requested size</text>`+"\n",
		y(yMax/2), y(yMax/2))

	if len(all) == 0 {
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle">no converge or resize scenario ran</text>`+"\n", x(xMax/2), y(yMax/2))
	}
	for i, s := range all {
		var pts strings.Builder
		fmt.Fprintf(&pts, "%.1f,%.1f", x(0), y(0))
		for j, t := range s.times {
			// A step: the count rises at the moment an object converges.
			fmt.Fprintf(&pts, " %.1f,%.1f %.1f,%.1f", x(t), y(float64(j)), x(t), y(float64(j+1)))
		}
		fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>`+"\n", s.color, pts.String())
		ly := marginTop + 16 + 18*i
		fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2"/>`+"\n",
			marginLeft+16, ly, marginLeft+40, ly, s.color)
		fmt.Fprintf(&b, `<text x="%d" y="%d">%s</text>`+"\n", marginLeft+46, ly+4, html.EscapeString(s.label))
	}
	b.WriteString("</svg>\n")
	return b.String()
}

// niceStep is a 1, 2 or 5 times a power of ten that cuts [0, span] into at
// most about n steps.
func niceStep(span float64, n int) float64 {
	if span <= 0 {
		return 1
	}
	raw := span / float64(n)
	pow := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, f := range []float64{1, 2, 5, 10} {
		if f*pow >= raw {
			return f * pow
		}
	}
	return 10 * pow
}

func formatTick(v float64) string {
	if v == math.Trunc(v) {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%g", math.Round(v*1000)/1000)
}
