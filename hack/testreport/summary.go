package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
)

// summarize prints the totals of a report file. Packages run more than once
// (by two targets) count once per run.
func summarize(out io.Writer, reportPath string) error {
	f, err := os.Open(reportPath)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	count := map[string]int{}
	var failed, skipped []string
	skippedTests, skippedSpecs := 0, 0
	dec := json.NewDecoder(f)
	for {
		var r Result
		if err := dec.Decode(&r); err == io.EOF {
			break
		} else if err != nil {
			return fmt.Errorf("%s: %w", reportPath, err)
		}
		count[r.Outcome]++
		switch r.Outcome {
		case "fail":
			failed = append(failed, r.Package)
		case "skip":
			skipped = append(skipped, r.Package)
		}
		skippedTests += len(r.SkippedTests)
		for _, t := range r.SkippedTests {
			_, _ = fmt.Fprintf(out, "skipped test: %s %s\n", r.Package, t)
		}
		if r.GinkgoSkipped > 0 {
			skippedSpecs += r.GinkgoSkipped
			_, _ = fmt.Fprintf(out, "skipped ginkgo specs: %s %d of %d\n", r.Package, r.GinkgoSkipped, r.GinkgoSpecs)
		}
	}
	if len(failed) > 0 {
		_, _ = fmt.Fprintf(out, "failed packages: %s\n", strings.Join(failed, " "))
	}
	if len(skipped) > 0 {
		_, _ = fmt.Fprintf(out, "skipped packages: %s\n", strings.Join(skipped, " "))
	}
	_, _ = fmt.Fprintf(out, "without test files: %d packages; skipped: %d tests, %d ginkgo specs\n", count["none"], skippedTests, skippedSpecs)
	_, err = fmt.Fprintf(out, "packages: %d passed, %d failed, %d skipped\n", count["pass"], count["fail"], count["skip"])
	return err
}
