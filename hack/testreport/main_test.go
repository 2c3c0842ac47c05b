package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/gomega"
)

func TestReport(t *testing.T) {
	in := strings.Join([]string{
		`{"Action":"start","Package":"a"}`,
		`{"Action":"run","Package":"a","Test":"TestOne"}`,
		`{"Action":"output","Package":"a","Test":"TestOne","Output":"=== RUN   TestOne\n"}`,
		`{"Action":"pass","Package":"a","Test":"TestOne"}`,
		`{"Action":"run","Package":"a","Test":"TestTwo"}`,
		`{"Action":"skip","Package":"a","Test":"TestTwo"}`,
		`{"Action":"output","Package":"a","Output":"PASS\n"}`,
		`{"Action":"output","Package":"a","Output":"ok  \ta\t0.1s\n"}`,
		`{"Action":"pass","Package":"a"}`,
		`{"Action":"run","Package":"b","Test":"TestOnly"}`,
		`{"Action":"skip","Package":"b","Test":"TestOnly"}`,
		`{"Action":"pass","Package":"b"}`,
		`{"Action":"run","Package":"suite","Test":"TestSuite"}`,
		`{"Action":"output","Package":"suite","Test":"TestSuite","Output":"Ran 0 of 7 Specs in 0.002 seconds\n"}`,
		`{"Action":"pass","Package":"suite","Test":"TestSuite"}`,
		`{"Action":"pass","Package":"suite"}`,
		`{"Action":"run","Package":"bad","Test":"TestX"}`,
		`{"Action":"output","Package":"bad","Test":"TestX","Output":"    x_test.go:9: broken\n"}`,
		`{"Action":"fail","Package":"bad","Test":"TestX"}`,
		`{"Action":"fail","Package":"bad"}`,
		`{"Action":"output","Package":"none","Output":"?   \tnone\t[no test files]\n"}`,
		`{"Action":"skip","Package":"none"}`,
		`# a line go printed itself`,
		`{"Action":"run","Package":"cut","Test":"TestY"}`,
	}, "\n")
	var out strings.Builder
	got, err := report(strings.NewReader(in), &out, false)
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	want := []Result{
		{Package: "a", Outcome: "pass", Tests: 2, SkippedTests: []string{"TestTwo"}},
		{Package: "b", Outcome: "skip", Tests: 1, SkippedTests: []string{"TestOnly"}},
		{Package: "suite", Outcome: "skip", Tests: 1, GinkgoSpecs: 7, GinkgoSkipped: 7},
		{Package: "bad", Outcome: "fail", Tests: 1},
		{Package: "none", Outcome: "none"},
		{Package: "cut", Outcome: "fail", Tests: 1},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
	// Only package lines and the failed test's output, as plain go test.
	wantOut := "ok  \ta\t0.1s\n    x_test.go:9: broken\n?   \tnone\t[no test files]\n# a line go printed itself\n"
	if out.String() != wantOut {
		t.Errorf("output = %q, want %q", out.String(), wantOut)
	}
}

func TestReportVerbosePrintsEverything(t *testing.T) {
	in := `{"Action":"run","Package":"a","Test":"TestOne"}
{"Action":"output","Package":"a","Test":"TestOne","Output":"=== RUN   TestOne\n"}
{"Action":"pass","Package":"a","Test":"TestOne"}
{"Action":"pass","Package":"a"}`
	var out strings.Builder
	_, err := report(strings.NewReader(in), &out, true)
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	if out.String() != "=== RUN   TestOne\n" {
		t.Errorf("verbose output = %q", out.String())
	}
}

func TestSummarize(t *testing.T) {
	g := NewWithT(t)
	report := filepath.Join(t.TempDir(), "report")
	g.Expect(appendResults(report, []Result{
		{Package: "a", Outcome: "pass", Tests: 2, SkippedTests: []string{"TestTwo"}},
		{Package: "b", Outcome: "skip", Tests: 1, SkippedTests: []string{"TestOnly"}},
		{Package: "c", Outcome: "fail", Tests: 1},
		{Package: "d", Outcome: "none"},
		{Package: "e", Outcome: "pass", GinkgoSpecs: 9, GinkgoSkipped: 2},
	})).To(Succeed())
	var out strings.Builder
	g.Expect(summarize(&out, report)).To(Succeed())
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if last := lines[len(lines)-1]; last != "packages: 2 passed, 1 failed, 1 skipped" {
		t.Errorf("closing line = %q", last)
	}
	for _, want := range []string{"skipped test: b TestOnly", "skipped ginkgo specs: e 2 of 9", "failed packages: c",
		"skipped packages: b", "skipped: 2 tests, 2 ginkgo specs"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, out.String())
		}
	}
}
