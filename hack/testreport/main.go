// Command testreport reads `go test -json` on its standard input, prints what
// plain `go test` would (each package's summary line, and the output of the
// tests that failed), and, when $TEST_REPORT names a
// file, appends one JSON line per package to it: whether it passed, failed,
// was skipped (every test it ran skipped, or every ginkgo spec) or has no
// tests, and which tests and how many ginkgo specs it skipped. .ci/run adds
// the lines up, so that a skipped suite cannot pass for a passed one.
//
//	go test -json ./... | go run ./hack/testreport
//
// With $TEST_VERBOSE set it prints every test's output as it comes, as
// `go test -v` does.
//
//	go run ./hack/testreport -summarize <report file> [<log>...]
//
// adds up a report file and the "fuzz: <package> <target> ok|FAIL" lines of
// hack/fuzz.sh in the logs, and ends with the one line CI reads:
//
//	packages: 24 passed, 0 failed, 0 skipped; fuzz targets: 5 passed, 0 failed
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
)

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Action  string
	Package string
	Test    string
	Output  string
}

// Result is the line written for one package.
type Result struct {
	Package string `json:"package"`
	// Outcome is pass, fail, skip (ran nothing but skips) or none (no
	// test files).
	Outcome      string   `json:"outcome"`
	Tests        int      `json:"tests"`
	SkippedTests []string `json:"skippedTests,omitempty"`
	// GinkgoSpecs and GinkgoSkipped come from ginkgo's "Ran X of Y Specs".
	GinkgoSpecs   int `json:"ginkgoSpecs,omitempty"`
	GinkgoSkipped int `json:"ginkgoSkipped,omitempty"`
}

var ranSpecs = regexp.MustCompile(`^Ran (\d+) of (\d+) Specs? in `)

func main() {
	if len(os.Args) > 2 && os.Args[1] == "-summarize" {
		if err := summarize(os.Stdout, os.Args[2], os.Args[3:]); err != nil {
			fmt.Fprintln(os.Stderr, "testreport:", err)
			os.Exit(2)
		}
		return
	}
	results, err := report(os.Stdin, os.Stdout, os.Getenv("TEST_VERBOSE") != "")
	if err != nil {
		fmt.Fprintln(os.Stderr, "testreport:", err)
		os.Exit(2)
	}
	if path := os.Getenv("TEST_REPORT"); path != "" {
		if err := appendResults(path, results); err != nil {
			fmt.Fprintln(os.Stderr, "testreport:", err)
			os.Exit(2)
		}
	}
}

// report writes to out what plain go test prints and tallies each package.
// Lines that are not JSON (a build failure printed by go itself) are copied
// as they are. A test's output is held until it passes (dropped) or fails
// (printed); a package that fails without a failed test (a panic, a timeout)
// prints everything it held.
func report(in io.Reader, out io.Writer, verbose bool) ([]Result, error) {
	// held is the output of each package's tests not yet printed or dropped.
	held := map[string]map[string][]string{}
	flush := func(pkg, test string) error {
		for t, lines := range held[pkg] {
			if test != "" && t != test {
				continue
			}
			for _, l := range lines {
				if _, err := io.WriteString(out, l); err != nil {
					return err
				}
			}
			delete(held[pkg], t)
		}
		return nil
	}
	byPkg := map[string]*Result{}
	var order []string
	get := func(pkg string) *Result {
		r, ok := byPkg[pkg]
		if !ok {
			r = &Result{Package: pkg}
			byPkg[pkg] = r
			order = append(order, pkg)
		}
		return r
	}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if json.Unmarshal(line, &e) != nil || e.Action == "" {
			if _, err := fmt.Fprintf(out, "%s\n", line); err != nil {
				return nil, err
			}
			continue
		}
		if e.Package == "" {
			if e.Action == "output" || e.Action == "build-output" {
				if _, err := io.WriteString(out, e.Output); err != nil {
					return nil, err
				}
			}
			continue
		}
		r := get(e.Package)
		switch e.Action {
		case "output", "build-output":
			if e.Test != "" && !verbose {
				if held[e.Package] == nil {
					held[e.Package] = map[string][]string{}
				}
				held[e.Package][e.Test] = append(held[e.Package][e.Test], e.Output)
			} else if e.Output != "PASS\n" || verbose {
				// The binary's closing PASS, which plain go test shows
				// only with -v.
				if _, err := io.WriteString(out, e.Output); err != nil {
					return nil, err
				}
			}
			if m := ranSpecs.FindStringSubmatch(e.Output); m != nil {
				ran, _ := strconv.Atoi(m[1])
				total, _ := strconv.Atoi(m[2])
				r.GinkgoSpecs += total
				r.GinkgoSkipped += total - ran
			}
		case "run":
			if e.Test != "" {
				r.Tests++
			}
		case "skip":
			if e.Test != "" {
				r.SkippedTests = append(r.SkippedTests, e.Test)
			} else if r.Outcome == "" {
				r.Outcome = "none"
			}
		case "pass":
			if e.Test == "" {
				r.Outcome = e.Action
			} else {
				delete(held[e.Package], e.Test)
			}
		case "fail":
			if e.Test == "" {
				r.Outcome = e.Action
			}
			if err := flush(e.Package, e.Test); err != nil {
				return nil, err
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	results := make([]Result, 0, len(order))
	for _, pkg := range order {
		r := byPkg[pkg]
		if r.Outcome == "pass" && r.Tests > 0 && len(r.SkippedTests) == r.Tests {
			r.Outcome = "skip"
		}
		if r.Outcome == "pass" && r.GinkgoSpecs > 0 && r.GinkgoSkipped == r.GinkgoSpecs {
			r.Outcome = "skip"
		}
		if r.Outcome == "" {
			// No final event: the run was cut short.
			r.Outcome = "fail"
		}
		results = append(results, *r)
	}
	return results, nil
}

func appendResults(path string, results []Result) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(f)
	for _, r := range results {
		if err := enc.Encode(r); err != nil {
			_ = f.Close()
			return err
		}
	}
	return f.Close()
}
