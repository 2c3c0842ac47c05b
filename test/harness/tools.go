package harness

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/example-inc/memcached-operator/test/fixtures"
)

// Tool is the path of a tool the Makefile builds: $NAME (upper case) when
// set, as `make` passes them, or bin/name.
func Tool(name string) string {
	if p := os.Getenv(strings.ToUpper(name)); p != "" {
		return p
	}
	return filepath.Join(fixtures.RepoRoot(), "bin", name)
}

// Kubectl runs bin/kubectl with kubeconfig, stdin if given, and returns its
// standard output; its standard error is in the error.
func Kubectl(ctx context.Context, kubeconfig string, stdin []byte, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, Tool("kubectl"), append([]string{"--kubeconfig", kubeconfig}, args...)...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("kubectl %s: %w: %s", strings.Join(args, " "), err, stderr.String())
	}
	return out, nil
}

// ErrNoTool marks a tool that is not built, which makes a test skip rather
// than fail.
var ErrNoTool = errors.New("tool missing")

// KustomizeBuild runs `kustomize build dir` (config/default is what `make
// deploy` applies and `make build-installer` writes).
func KustomizeBuild(dir string) ([]byte, error) {
	kustomize := Tool("kustomize")
	if _, err := os.Stat(kustomize); err != nil {
		return nil, fmt.Errorf("%w: %v (run make kustomize)", ErrNoTool, err)
	}
	var stderr bytes.Buffer
	cmd := exec.Command(kustomize, "build", dir)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("kustomize build %s: %w: %s", dir, err, stderr.String())
	}
	return out, nil
}
