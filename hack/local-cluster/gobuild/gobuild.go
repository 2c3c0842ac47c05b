package gobuild

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/example-inc/memcached-operator/hack/repo"
)

// Module builds pkg, the directory of a main package relative to the
// repository's root, into out, as the Dockerfile builds the manager and the
// TLS reloader. The build runs in the module that holds pkg (the operator's,
// or this tool's), so that each is built from its own go.mod.
func Module(ctx context.Context, out, pkg string) error {
	dir, rel, err := moduleOf(filepath.Join(repo.Root(), pkg))
	if err != nil {
		return err
	}
	return Static(ctx, dir, out, "./"+rel, "-s -w", "GOFIPS140="+repo.GoFIPS140())
}

// moduleOf returns the nearest directory at or above pkgDir with a go.mod,
// and pkgDir relative to it.
func moduleOf(pkgDir string) (dir, rel string, err error) {
	for dir = pkgDir; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			rel, err := filepath.Rel(dir, pkgDir)
			return dir, filepath.ToSlash(rel), err
		}
		if filepath.Dir(dir) == dir {
			return "", "", fmt.Errorf("no go.mod at or above %s", pkgDir)
		}
	}
}

// Static builds pkg, a main package that the module in dir (this one, or a
// wrapper module under hack/tools) builds, into out with no cgo, with
// ldflags and the environment variables env, using the local Go toolchain
// whatever the module's go line says.
func Static(ctx context.Context, dir, out, pkg, ldflags string, env ...string) error {
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags", ldflags, "-o", out, pkg)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "CGO_ENABLED=0", "GOTOOLCHAIN=local"), env...)
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %w\n%s", pkg, err, b)
	}
	return nil
}
