package main

import (
	"os"
	"testing"
)

// The committed document shows what the committed results files hold:
// neither is edited without the other (go -C test run ./bench -render).
func TestCommittedReportMatchesTheResults(t *testing.T) {
	o := parsed(t)
	doc, err := os.ReadFile(o.doc)
	if err != nil {
		t.Fatal(err)
	}
	want, err := rendered(doc, o)
	if err != nil {
		t.Fatal(err)
	}
	if string(want) != string(doc) {
		t.Error("docs/benchmarks.md's generated sections are not what docs/bench/*.json say: run go -C test run ./bench -render")
	}
}

func TestSectionReplace(t *testing.T) {
	a, b := controlPlaneSection, memcachedSection
	doc := []byte("intro\n" + a.begin + "\nold\n" + a.end + "\nmiddle\n" + b.begin + "\nold b\n" + b.end + "\noutro\n")
	got, err := b.replace(doc, "\nnew b\n")
	if err == nil {
		got, err = a.replace(got, "\nnew\n")
	}
	if err != nil {
		t.Fatal(err)
	}
	if want := "intro\n" + a.begin + "\n\nnew\n" + a.end + "\nmiddle\n" + b.begin + "\n\nnew b\n" + b.end + "\noutro\n"; string(got) != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if _, err := a.replace([]byte("no markers"), "x"); err == nil {
		t.Error("a document without the markers was accepted")
	}
}

func TestFormatting(t *testing.T) {
	for n, want := range map[int]string{7: "7", 1000: "1,000", 10000: "10,000", 1234567: "1,234,567"} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q, want %q", n, got, want)
		}
	}
	for s, want := range map[float64]string{20: "20 s", 815.04: "13 min 35 s", 300: "5 min 0 s"} {
		if got := duration(s); got != want {
			t.Errorf("duration(%v) = %q, want %q", s, got, want)
		}
	}
}

func TestShortFunction(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"sigs.k8s.io/structured-merge-diff/v6/fieldpath.(*Set).Insert", "fieldpath.(*Set).Insert"},
		{"sigs.k8s.io/controller-runtime/pkg/internal/controller.(*Controller[go.shape.struct { k8s.io/apimachinery/pkg/types.NamespacedName }]).Start.func1.1",
			"controller.(*Controller[...]).Start.func1.1"},
		{"k8s.io/apimachinery/pkg/util/sets.Set[go.shape.string].Insert", "sets.Set[...].Insert"},
		{"runtime.mallocgc", "runtime.mallocgc"},
	} {
		if got := shortFunction(tc.in); got != tc.want {
			t.Errorf("shortFunction(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
