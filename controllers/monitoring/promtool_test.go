package monitoring

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/example-inc/memcached-operator/hack/repo"
)

// promtool runs bin/promtool (`make promtool` builds it; make test depends on
// it) with args in dir, and fails the test with promtool's output when it
// fails. A missing promtool fails the test, never skips it: a skipped rule
// test would print ok.
func promtool(t *testing.T, dir string, args ...string) {
	t.Helper()
	path := repo.Tool("promtool")
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("promtool not built (run make promtool): %v", err)
	}
	cmd := exec.Command(path, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("promtool %v: %v\n%s", args, err, out)
	}
}

// writeYAML writes v as YAML to dir/name and returns the path.
func writeYAML(t *testing.T, dir, name string, v any) string {
	t.Helper()
	data, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// copyFile copies src into dir under its own name and returns the copy's
// path.
func copyFile(t *testing.T, src, dir string) string {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(dir, filepath.Base(src))
	if err := os.WriteFile(dst, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return dst
}
