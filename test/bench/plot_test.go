package main

import (
	"encoding/xml"
	"strings"
	"testing"
)

func TestPlotIsWellFormedSVG(t *testing.T) {
	for name, all := range map[string][]series{
		"empty":  nil,
		"curves": {{"converge <1000>", "#000", []float64{0.5, 1, 2.5}}, {"resize", "#f00", []float64{3}}},
	} {
		svg := plotSVG(all, machine{CPUs: 2, MemoryGiB: 24, Kubernetes: "v1.37.2"})
		dec := xml.NewDecoder(strings.NewReader(svg))
		for {
			_, err := dec.Token()
			if err != nil {
				if err.Error() != "EOF" {
					t.Errorf("%s: not well-formed XML: %v", name, err)
				}
				break
			}
		}
		if !strings.HasPrefix(svg, "<svg") || !strings.HasSuffix(svg, "</svg>\n") {
			t.Errorf("%s: not an SVG document", name)
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
