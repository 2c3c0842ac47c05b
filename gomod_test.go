package main

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

const modulePath = "github.com/example-inc/memcached-operator"

// The operator's go.mod is what a scanner of the operator reads: each module
// it requires directly gives a package to the manager or its sidecar, or to
// those packages' own tests, never only to the test suites, the bench or the
// local cluster, which are modules of their own. Nor does the manager build
// a package of theirs.
func TestGoModRequiresOnlyWhatTheOperatorBuilds(t *testing.T) {
	shipped := goList(t, "-deps", "-f", "{{.ImportPath}} {{with .Module}}{{.Path}}{{end}}", ".", "./cmd/tls-reloader")
	var own []string
	for _, line := range shipped {
		pkg, module, _ := strings.Cut(line, " ")
		if module != modulePath {
			continue
		}
		own = append(own, pkg)
		for _, other := range []string{modulePath + "/test", modulePath + "/hack/"} {
			if strings.HasPrefix(pkg, other) {
				t.Errorf("the manager or its sidecar builds %s", pkg)
			}
		}
	}
	used := map[string]bool{}
	for _, module := range goList(t, append([]string{"-deps", "-test", "-f", "{{with .Module}}{{.Path}}{{end}}"}, own...)...) {
		used[module] = true
	}

	out, err := exec.Command("go", "mod", "edit", "-json").Output()
	if err != nil {
		t.Fatalf("go mod edit -json: %v", err)
	}
	var mod struct {
		Require []struct {
			Path     string
			Indirect bool
		}
	}
	if err := json.Unmarshal(out, &mod); err != nil {
		t.Fatal(err)
	}
	direct := 0
	for _, r := range mod.Require {
		if r.Indirect {
			continue
		}
		direct++
		if !used[r.Path] {
			t.Errorf("go.mod requires %s, which neither the manager, nor its sidecar, nor their tests import", r.Path)
		}
	}
	if direct == 0 {
		t.Fatal("go mod edit -json listed no direct requirement")
	}
}

// goList runs go list in the operator's module and returns its lines.
func goList(t *testing.T, args ...string) []string {
	t.Helper()
	out, err := exec.Command("go", append([]string{"list"}, args...)...).Output()
	if err != nil {
		t.Fatalf("go list %s: %v", strings.Join(args, " "), err)
	}
	return strings.Split(strings.TrimSpace(string(out)), "\n")
}
