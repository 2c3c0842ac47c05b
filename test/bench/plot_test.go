package main

import (
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPlotIsWellFormedSVG(t *testing.T) {
	for name, r := range map[string]*results{
		"empty": {},
		"curves": {Scenarios: scenarioResults{
			Converge: &convergeResult{Objects: 3, ToSize: 3, ConvergedAt: []float64{0.5, 1, 2.5}},
			Resize:   &convergeResult{Objects: 1, FromSize: 3, ToSize: 5, ConvergedAt: []float64{3}},
		}},
	} {
		path := filepath.Join(t.TempDir(), "plot", "converge.svg")
		if err := writePlot(path, r); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		svg, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		// Unmarshal reads the whole root element, so it fails on any
		// malformed part and on a root other than svg.
		if err := xml.Unmarshal(svg, &struct {
			XMLName xml.Name `xml:"svg"`
		}{}); err != nil {
			t.Errorf("%s: not an SVG document: %v", name, err)
		}
		if !strings.Contains(string(svg), "objects Available at the requested size") {
			t.Errorf("%s: no axis label", name)
		}
		if name == "curves" && !strings.Contains(string(svg), "resize storm: 1 objects 3 -&gt; 5") {
			t.Errorf("%s: no legend for the resize curve", name)
		}
	}
}

func TestNiceStep(t *testing.T) {
	for _, c := range []struct{ span, want float64 }{{0, 1}, {7, 1}, {80, 10}, {130, 20}, {1000, 200}, {0.3, 0.05}} {
		if got := niceStep(c.span, 8); got != c.want {
			t.Errorf("niceStep(%v) = %v, want %v", c.span, got, c.want)
		}
	}
}
