package gobuild

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/example-inc/memcached-operator/hack/repo"
)

// Module builds pkg, a main package of this module, into out, as the
// Dockerfile builds the manager and the TLS reloader.
func Module(ctx context.Context, out, pkg string) error {
	return Static(ctx, repo.Root(), out, pkg, "-s -w", "GOFIPS140="+repo.GoFIPS140())
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
