package harness

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"

	"github.com/example-inc/memcached-operator/hack/repo"
)

// Tool is the path of a tool the Makefile builds: $NAME (upper case) when
// set, as `make` passes them, or bin/name.
func Tool(name string) string { return repo.Tool(name) }

// RequireTools fails the spec, naming the make target, unless every named
// tool is built. A missing prerequisite is a failure, never a skip: a
// skipped suite would print ok.
func RequireTools(names ...string) {
	ginkgo.GinkgoHelper()
	for _, name := range names {
		_, err := os.Stat(Tool(name))
		gomega.Expect(err).NotTo(gomega.HaveOccurred(), "run make %s", name)
	}
}

// Kubectl runs bin/kubectl with kubeconfig, stdin if given, and returns its
// standard output; its standard error is in the error.
func Kubectl(ctx context.Context, kubeconfig string, stdin []byte, args ...string) ([]byte, error) {
	return KubectlWithEnv(ctx, nil, kubeconfig, stdin, args...)
}

// KubectlWithEnv is Kubectl in the environment env, as a user's shell runs
// it (nil: the test's).
func KubectlWithEnv(ctx context.Context, env []string, kubeconfig string, stdin []byte, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, Tool("kubectl"), append([]string{"--kubeconfig", kubeconfig}, args...)...)
	cmd.Env = env
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

// KustomizeBuild runs `kustomize build dir` (config/default is what `make
// deploy` applies and `make build-installer` writes).
func KustomizeBuild(dir string) ([]byte, error) {
	kustomize := Tool("kustomize")
	if _, err := os.Stat(kustomize); err != nil {
		return nil, fmt.Errorf("%w (run make kustomize)", err)
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

// Make runs a target of the repository's Makefile with variables
// (NAME=value), as a developer would, and returns its output; a failure
// fails the spec with that output.
func Make(ctx context.Context, target string, vars ...string) string {
	ginkgo.GinkgoHelper()
	return MakeWithEnv(ctx, nil, target, vars...)
}

// MakeWithEnv is Make in the environment env, as a user's shell runs it
// (nil: the test's).
func MakeWithEnv(ctx context.Context, env []string, target string, vars ...string) string {
	ginkgo.GinkgoHelper()
	cmd := exec.CommandContext(ctx, "make", append([]string{"--no-print-directory", target}, vars...)...)
	cmd.Dir = repo.Root()
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	gomega.Expect(err).NotTo(gomega.HaveOccurred(), "make %s:\n%s", target, out)
	return string(out)
}
