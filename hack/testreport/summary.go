package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
)

var fuzzLine = regexp.MustCompile(`^fuzz: \S+ (\S+) (ok|FAIL)$`)

// summarize prints the totals of a report file and of the fuzz lines in the
// logs. Packages run more than once (by two targets) count once per run.
func summarize(out io.Writer, reportPath string, logs []string) error {
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
	fuzz := map[string]int{}
	var fuzzFailed []string
	for _, path := range logs {
		lf, err := os.Open(path)
		if err != nil {
			return err
		}
		sc := bufio.NewScanner(lf)
		for sc.Scan() {
			if m := fuzzLine.FindStringSubmatch(strings.TrimSpace(sc.Text())); m != nil {
				fuzz[m[2]]++
				if m[2] == "FAIL" {
					fuzzFailed = append(fuzzFailed, m[1])
				}
			}
		}
		err = sc.Err()
		_ = lf.Close()
		if err != nil {
			return err
		}
	}
	if len(failed) > 0 {
		_, _ = fmt.Fprintf(out, "failed packages: %s\n", strings.Join(failed, " "))
	}
	if len(skipped) > 0 {
		_, _ = fmt.Fprintf(out, "skipped packages: %s\n", strings.Join(skipped, " "))
	}
	if len(fuzzFailed) > 0 {
		_, _ = fmt.Fprintf(out, "failed fuzz targets: %s\n", strings.Join(fuzzFailed, " "))
	}
	_, _ = fmt.Fprintf(out, "without test files: %d packages; skipped: %d tests, %d ginkgo specs\n", count["none"], skippedTests, skippedSpecs)
	_, err = fmt.Fprintf(out, "packages: %d passed, %d failed, %d skipped; fuzz targets: %d passed, %d failed\n",
		count["pass"], count["fail"], count["skip"], fuzz["ok"], fuzz["FAIL"])
	return err
}
