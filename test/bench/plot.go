package main

import (
	"errors"
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// writePlot draws the objects converged over time of the floor, converge
// and resize scenarios, as an SVG: the file diffs as text.
func writePlot(path string, r *results) error {
	m := r.Machine
	p := newPlot(fmt.Sprintf("Memcached objects Available over time\n%d CPUs, %.0f GiB, Kubernetes %s (local cluster, kwok nodes)",
		m.CPUs, m.MemoryGiB, m.Kubernetes), "seconds since the first request", "objects Available at the requested size")
	p.Legend.Top, p.Legend.Left, p.Legend.XOffs, p.Legend.YOffs = true, true, 12, -8
	add := func(label string, rgb color.RGBA, times []float64) {
		// Point i is (times[i], i+1); a post-step raises the count at the
		// moment an object converges.
		pts := plotter.XYs{{}}
		for i, t := range times {
			pts = append(pts, plotter.XY{X: t, Y: float64(i + 1)})
		}
		line := &plotter.Line{XYs: pts, StepStyle: plotter.PostStep, LineStyle: draw.LineStyle{Color: rgb, Width: vg.Points(2)}}
		p.Add(line)
		p.Legend.Add(label, line)
	}
	sc := r.Scenarios
	if sc.Floor != nil {
		add("floor: the same objects, no operator (Deployments Available)", color.RGBA{0x7f, 0x7f, 0x7f, 0xff}, sc.Floor.ConvergedAt)
	}
	if c := sc.Converge; c != nil {
		add(fmt.Sprintf("converge: create %d (size %d)", c.Objects, c.ToSize), color.RGBA{0x1f, 0x77, 0xb4, 0xff}, c.ConvergedAt)
	}
	if c := sc.Resize; c != nil {
		add(fmt.Sprintf("resize storm: %d objects %d -> %d", c.Objects, c.FromSize, c.ToSize), color.RGBA{0xd6, 0x27, 0x28, 0xff}, c.ConvergedAt)
	}
	if sc.Floor == nil && sc.Converge == nil && sc.Resize == nil {
		p.Title.Text += "\nno converge or resize scenario ran"
	}
	roundAxis(&p.X, 8)
	roundAxis(&p.Y, 5)
	return savePlot(p, path)
}

// writeRolloutPlot draws the rollout scenario's hit ratio over time, one
// line per pacing, from the change on, with the moments each rollout ended.
func writeRolloutPlot(path string, r *rolloutResults) error {
	m := r.Machine
	c := r.Config
	p := newPlot(fmt.Sprintf("Hit ratio of a client during a rollout of %d memcached pods\n%s keys of Zipf popularity (s = %g), %s gets/s; %d CPUs, Kubernetes %s (real node)",
		c.Size, thousands(c.Keys), c.ZipfS, thousands(c.GetsPerSecond), m.CPUs, m.Kubernetes),
		"seconds since the change", fmt.Sprintf("hit ratio over each %g s, %%", c.BucketSeconds))
	p.Legend.Top, p.Legend.Left, p.Legend.XOffs, p.Legend.YOffs = false, false, -12, 8
	colors := []color.RGBA{{0x1f, 0x77, 0xb4, 0xff}, {0xd6, 0x27, 0x28, 0xff}}
	for i, x := range r.Cases {
		rgb := colors[i%len(colors)]
		var pts plotter.XYs
		for j, b := range x.Buckets {
			if t := float64(j)*c.BucketSeconds - x.ChangedAt; b.Gets > 0 && t >= -c.BucketSeconds {
				pts = append(pts, plotter.XY{X: t, Y: b.hitRatio()})
			}
		}
		if len(pts) == 0 {
			continue
		}
		line := &plotter.Line{XYs: pts, StepStyle: plotter.PostStep, LineStyle: draw.LineStyle{Color: rgb, Width: vg.Points(1.5)}}
		done := x.DoneAt - x.ChangedAt
		end := &plotter.Line{XYs: plotter.XYs{{X: done, Y: 0}, {X: done, Y: 100}},
			LineStyle: draw.LineStyle{Color: rgb, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(4), vg.Points(3)}}}
		p.Add(line, end)
		p.Legend.Add(fmt.Sprintf("pacing %s: rollout done at %.0f s (dashed)", x.Pacing, done), line)
		p.X.Max = math.Max(p.X.Max, pts[len(pts)-1].X)
	}
	p.X.Min, p.Y.Max = -c.BucketSeconds, 100
	roundAxis(&p.X, 10)
	roundAxis(&p.Y, 5)
	return savePlot(p, path)
}

// newPlot is a plot with the bench's style: sans labels, a grid and axes
// from 0.
func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.Title.TextStyle.Font.Size = 14
	// gonum draws in serif by default; sans reads better at these sizes.
	for _, f := range []*font.Font{&p.Title.TextStyle.Font, &p.X.Label.TextStyle.Font, &p.Y.Label.TextStyle.Font,
		&p.X.Tick.Label.Font, &p.Y.Tick.Label.Font, &p.Legend.TextStyle.Font} {
		f.Variant = "Sans"
	}
	p.X.Min, p.Y.Min = 0, 0
	p.Add(plotter.NewGrid())
	return p
}

func savePlot(p *plot.Plot, path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	c := vgsvg.New(800, 460)
	// The last tick label is centred on the axis's end: room for its half.
	p.Draw(draw.Crop(draw.New(c), 0, -16, 0, 0))
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	_, err = c.WriteTo(f)
	return errors.Join(err, f.Close())
}

// roundAxis extends a from 0 to a multiple of a round step that cuts it into
// about n, and labels every step: gonum's default ticks label about three
// values, too few to read a curve off.
func roundAxis(a *plot.Axis, n int) {
	step := niceStep(a.Max, n)
	a.Max = math.Max(step, math.Ceil(a.Max/step)*step)
	var ticks plot.ConstantTicks
	for i := 0.0; i*step <= a.Max+step/2; i++ {
		ticks = append(ticks, plot.Tick{Value: i * step, Label: strconv.FormatFloat(i*step, 'f', -1, 32)})
	}
	a.Tick.Marker = ticks
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
