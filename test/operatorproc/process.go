package operatorproc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/example-inc/memcached-operator/test/fixtures"
)

// Build compiles the manager (the module's main package) to path, as
// `make build` does.
func Build(ctx context.Context, path string) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-o", path, ".")
	cmd.Dir = fixtures.RepoRoot()
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build of the operator: %w\n%s", err, out)
	}
	return nil
}

// Options say how one operator process is started.
type Options struct {
	// Binary is the manager, from Build.
	Binary string
	// Kubeconfig is passed as KUBECONFIG.
	Kubeconfig string
	// LogPath receives the process's stdout and stderr, appended, so that
	// restarts of one operator share a log.
	LogPath string
	// Args are the manager's flags.
	Args []string
	// Env is added to the environment (NAME=value). Variables the operator
	// reads (see operatorVariables) are taken from here only, never from the
	// test's own environment.
	Env []string
	// Dir is the working directory; the repository root when empty, so
	// relative paths in Args (config/webhook) resolve.
	Dir string
}

// operatorVariables are the environment variables that change what the
// operator does. A developer's shell (a proxy, a WATCH_NAMESPACE) must not
// leak into a test.
var operatorVariables = map[string]bool{
	"KUBECONFIG": true, "WATCH_NAMESPACE": true, "ENABLE_WEBHOOKS": true,
	"RELATED_IMAGE_MEMCACHED": true, "MEMCACHED_DEFAULT_SIZE": true,
	"MEMCACHED_MIN_SIZE": true, "MEMCACHED_MAX_SIZE": true,
	"HTTP_PROXY": true, "HTTPS_PROXY": true, "NO_PROXY": true,
	"http_proxy": true, "https_proxy": true, "no_proxy": true,
}

// Environ is the environment Start gives the process for opts.
func (opts Options) Environ() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !operatorVariables[name] {
			env = append(env, kv)
		}
	}
	if opts.Kubeconfig != "" {
		env = append(env, "KUBECONFIG="+opts.Kubeconfig)
	}
	return append(env, opts.Env...)
}

// Process is one running operator.
type Process struct {
	cmd     *exec.Cmd
	logPath string
	exited  chan struct{}
	err     error
}

// Start starts the operator; it does not wait for it to be ready.
func Start(opts Options) (*Process, error) {
	logFile, err := os.OpenFile(opts.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	_, _ = fmt.Fprintf(logFile, "=== %s starting %s %s\n",
		time.Now().Format(time.RFC3339Nano), opts.Binary, strings.Join(opts.Args, " "))
	cmd := exec.Command(opts.Binary, opts.Args...)
	cmd.Dir = opts.Dir
	if cmd.Dir == "" {
		cmd.Dir = fixtures.RepoRoot()
	}
	cmd.Env = opts.Environ()
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// Its own process group, so a signal to it cannot reach the test, and
	// killed with the test if the test dies first.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		return nil, fmt.Errorf("starting the operator: %w", err)
	}
	p := &Process{cmd: cmd, logPath: opts.LogPath, exited: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		_, _ = fmt.Fprintf(logFile, "=== %s exited: %v\n", time.Now().Format(time.RFC3339Nano), p.err)
		_ = logFile.Close()
		close(p.exited)
	}()
	return p, nil
}

// PID is the operator's process id.
func (p *Process) PID() int { return p.cmd.Process.Pid }

// LogPath is where the operator's output goes.
func (p *Process) LogPath() string { return p.logPath }

// Exited is closed when the process has exited.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// Running reports whether the process has not exited.
func (p *Process) Running() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// Err is how the process ended; nil while it runs.
func (p *Process) Err() error {
	if p.Running() {
		return nil
	}
	return p.err
}

// Stop sends SIGTERM, as kubelet does, and SIGKILL if the operator has not
// exited after timeout (which is then an error: the manager must shut down
// on SIGTERM). Stopping a stopped process does nothing.
func (p *Process) Stop(timeout time.Duration) error {
	if p == nil || !p.Running() {
		return nil
	}
	_ = syscall.Kill(-p.PID(), syscall.SIGTERM)
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-p.exited:
		return nil
	case <-timer.C:
		_ = p.Kill()
		return fmt.Errorf("the operator did not exit within %s of SIGTERM; killed it", timeout)
	}
}

// Kill sends SIGKILL, the crash no cleanup code sees, and waits for the
// exit.
func (p *Process) Kill() error {
	if p == nil || !p.Running() {
		return nil
	}
	if err := syscall.Kill(-p.PID(), syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	<-p.exited
	return nil
}

// Tail is the end of the operator's log, for failure messages.
func (p *Process) Tail(lines int) string { return Tail(p.logPath, lines) }

// Tail is the last n lines of the file at path.
func Tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return fmt.Sprintf("--- last %d lines of %s ---\n%s", len(lines), filepath.Base(path), bytes.Join(lines, []byte("\n")))
}
