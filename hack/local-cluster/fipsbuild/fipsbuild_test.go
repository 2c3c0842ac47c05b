package fipsbuild

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/example-inc/memcached-operator/hack/repo"
)

// build compiles main, the source of a main package that uses no
// cryptography, in a module of its own, with the environment variables
// env, and returns its path.
func build(t *testing.T, main string, env ...string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range map[string]string{
		"go.mod":  "module example.com/hello\n\ngo 1.26\n",
		"main.go": main,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(dir, "hello")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "GOTOOLCHAIN=local", "GOFLAGS="), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func TestCheck(t *testing.T) {
	const plain = "package main\n\nfunc main() {}\n"
	module := "GOFIPS140=" + repo.GoFIPS140()
	if err := Check(build(t, plain, module)); err != nil {
		t.Errorf("built with %s: %v", module, err)
	}
	for _, tt := range []struct {
		name, main, env string
	}{
		{"without the module", plain, "GOFIPS140=off"},
		// The Go tree's own copy of the module, FIPS 140-3 mode on by
		// default: not the validated module.
		{"the Go tree's module", plain, "GOFIPS140=latest"},
		// The validated module, with FIPS 140-3 mode off by default.
		{"the module, mode off", "//go:debug fips140=off\n" + plain, module},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if err := Check(build(t, tt.main, tt.env)); err == nil {
				t.Errorf("built with %s: no error", tt.env)
			}
		})
	}
}
