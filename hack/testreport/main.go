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
//	go run ./hack/testreport -summarize <report file>
//
// adds up a report file and ends with the one line CI reads:
//
//	packages: 24 passed, 0 failed, 0 skipped
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
	if len(os.Args) == 3 && os.Args[1] == "-summarize" {
		if err := summarize(os.Stdout, os.Args[2]); err != nil {
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
	r := &reporter{out: out, verbose: verbose, byPkg: map[string]*Result{}, held: map[string]map[string][]string{}}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e event
		if json.Unmarshal(sc.Bytes(), &e) != nil || e.Action == "" {
			if _, err := fmt.Fprintf(out, "%s\n", sc.Bytes()); err != nil {
				return nil, err
			}
			continue
		}
		if err := r.handle(e); err != nil {
			return nil, err
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return r.results(), nil
}

// reporter is report's state.
type reporter struct {
	out     io.Writer
	verbose bool
	byPkg   map[string]*Result
	order   []string
	// held is the output of each package's tests not yet printed or
	// dropped, by package and test.
	held map[string]map[string][]string
}

func (r *reporter) result(pkg string) *Result {
	res, ok := r.byPkg[pkg]
	if !ok {
		res = &Result{Package: pkg}
		r.byPkg[pkg] = res
		r.order = append(r.order, pkg)
	}
	return res
}

func (r *reporter) handle(e event) error {
	if e.Package == "" {
		if e.Action == "output" || e.Action == "build-output" {
			_, err := io.WriteString(r.out, e.Output)
			return err
		}
		return nil
	}
	res := r.result(e.Package)
	switch e.Action {
	case "output", "build-output":
		if m := ranSpecs.FindStringSubmatch(e.Output); m != nil {
			ran, _ := strconv.Atoi(m[1])
			total, _ := strconv.Atoi(m[2])
			res.GinkgoSpecs += total
			res.GinkgoSkipped += total - ran
		}
		return r.output(e)
	case "run":
		if e.Test != "" {
			res.Tests++
		}
	case "skip":
		if e.Test != "" {
			res.SkippedTests = append(res.SkippedTests, e.Test)
		} else if res.Outcome == "" {
			res.Outcome = "none"
		}
	case "pass":
		if e.Test == "" {
			res.Outcome = e.Action
		}
		delete(r.held[e.Package], e.Test)
	case "fail":
		if e.Test == "" {
			res.Outcome = e.Action
		}
		return r.flush(e.Package, e.Test)
	}
	return nil
}

// output prints a package's own lines (but the closing PASS, which plain go
// test shows only with -v) and holds a test's, unless verbose.
func (r *reporter) output(e event) error {
	if e.Test != "" && !r.verbose {
		if r.held[e.Package] == nil {
			r.held[e.Package] = map[string][]string{}
		}
		r.held[e.Package][e.Test] = append(r.held[e.Package][e.Test], e.Output)
		return nil
	}
	if e.Test == "" && e.Output == "PASS\n" && !r.verbose {
		return nil
	}
	_, err := io.WriteString(r.out, e.Output)
	return err
}

// flush prints what a failed test (or, for "", every test of a failed
// package) held.
func (r *reporter) flush(pkg, test string) error {
	for t, lines := range r.held[pkg] {
		if test != "" && t != test {
			continue
		}
		for _, l := range lines {
			if _, err := io.WriteString(r.out, l); err != nil {
				return err
			}
		}
		delete(r.held[pkg], t)
	}
	return nil
}

// results are the packages in the order they were first seen, with their
// outcome settled: a package that ran only skips is skipped, one with no
// final event (the run was cut short) failed.
func (r *reporter) results() []Result {
	out := make([]Result, 0, len(r.order))
	for _, pkg := range r.order {
		res := r.byPkg[pkg]
		if res.Outcome == "pass" && res.Tests > 0 && len(res.SkippedTests) == res.Tests {
			res.Outcome = "skip"
		}
		if res.Outcome == "pass" && res.GinkgoSpecs > 0 && res.GinkgoSkipped == res.GinkgoSpecs {
			res.Outcome = "skip"
		}
		if res.Outcome == "" {
			res.Outcome = "fail"
		}
		out = append(out, *res)
	}
	return out
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
