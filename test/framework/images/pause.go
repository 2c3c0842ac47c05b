package images

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/example-inc/memcached-operator/test/framework/repo"
)

// Pause writes the pod sandbox image to dir, tagged ref: ./pause built
// static, as /pause, run as nobody (65535), as registry.k8s.io/pause is.
func Pause(ctx context.Context, dir, ref string) (Image, error) {
	bin := filepath.Join(dir, "pause")
	if err := buildStatic(ctx, bin, "./test/framework/images/pause"); err != nil {
		return Image{}, err
	}
	e, err := hostExecutable(bin, "/pause")
	if err != nil {
		return Image{}, err
	}
	return write(filepath.Join(dir, "pause.tar"), []entry{e}, v1.Config{
		User:       "65535:65535",
		Entrypoint: []string{"/pause"},
		WorkingDir: "/",
	}, ref)
}

// buildStatic builds a main package of this module into out, with no cgo
// and with the Go Cryptographic Module GOFIPS140, as the Dockerfile builds
// the manager and the TLS reloader.
func buildStatic(ctx context.Context, out, pkg string) error {
	return goBuildStatic(ctx, repo.Root(), out, pkg, "-s -w", "GOFIPS140="+repo.GoFIPS140())
}

// goBuildStatic builds pkg, a main package that the module in dir (this
// one, or a wrapper module under hack/tools) builds, into out with no cgo,
// with ldflags and the environment variables env, using the local Go
// toolchain whatever the module's go line says.
func goBuildStatic(ctx context.Context, dir, out, pkg, ldflags string, env ...string) error {
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
