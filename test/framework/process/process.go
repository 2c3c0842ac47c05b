package process

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Spec says how to start a process.
type Spec struct {
	// Path is the binary.
	Path string
	// Args are its arguments.
	Args []string
	// Env is its whole environment; nil inherits the test's.
	Env []string
	// Dir is the working directory; empty: the test's.
	Dir string
	// LogPath receives stdout and stderr, appended, with a line marking
	// each start and exit.
	LogPath string
}

// Process is one run of a Spec. Start it again with Start(p.Spec()).
type Process struct {
	spec   Spec
	cmd    *exec.Cmd
	exited chan struct{}
	err    error
}

// Start starts the process; it does not wait for anything.
func Start(spec Spec) (*Process, error) {
	logFile, err := os.OpenFile(spec.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	_, _ = fmt.Fprintf(logFile, "=== %s starting %s %s\n",
		time.Now().Format(time.RFC3339Nano), spec.Path, strings.Join(spec.Args, " "))
	cmd := exec.Command(spec.Path, spec.Args...)
	cmd.Dir = spec.Dir
	cmd.Env = spec.Env
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		return nil, fmt.Errorf("starting %s: %w", filepath.Base(spec.Path), err)
	}
	p := &Process{spec: spec, cmd: cmd, exited: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		status := "exit status 0"
		if p.err != nil {
			status = p.err.Error()
		}
		_, _ = fmt.Fprintf(logFile, "=== %s %s exited: %s\n", time.Now().Format(time.RFC3339Nano), filepath.Base(spec.Path), status)
		_ = logFile.Close()
		close(p.exited)
	}()
	return p, nil
}

// Spec is what the process was started with.
func (p *Process) Spec() Spec { return p.spec }

// PID is the process id, also the id of its process group.
func (p *Process) PID() int { return p.cmd.Process.Pid }

// LogPath is where the output goes.
func (p *Process) LogPath() string { return p.spec.LogPath }

// Exited is closed once the process has exited and been reaped.
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

// Stop sends SIGTERM to the process group and waits; after timeout it sends
// SIGKILL, which is then reported as an error (the process did not honour
// SIGTERM). Whatever the process left in its group is killed too, so a
// caller starting it again finds its ports free. Stopping a process that
// has exited, or a nil one, does nothing.
func (p *Process) Stop(timeout time.Duration) error {
	return p.terminate(syscall.SIGTERM, timeout)
}

// Kill sends SIGKILL at once, the crash no cleanup code sees, and waits for
// the exit.
func (p *Process) Kill() error {
	return p.terminate(syscall.SIGKILL, 0)
}

func (p *Process) terminate(sig syscall.Signal, timeout time.Duration) error {
	if p == nil {
		return nil
	}
	pgid := p.PID()
	var timeoutErr error
	if p.Running() {
		_ = syscall.Kill(-pgid, sig)
		if sig == syscall.SIGKILL {
			<-p.exited
		} else {
			timer := time.NewTimer(timeout)
			select {
			case <-p.exited:
				timer.Stop()
			case <-timer.C:
				timeoutErr = fmt.Errorf("%s did not exit within %s of %s; killed it", filepath.Base(p.spec.Path), timeout, sig)
				_ = syscall.Kill(-pgid, syscall.SIGKILL)
				<-p.exited
			}
		}
	}
	if err := syscall.Kill(-pgid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return errors.Join(timeoutErr, fmt.Errorf("killing the process group of %s: %w", filepath.Base(p.spec.Path), err))
	}
	return timeoutErr
}

// WaitFor calls check every 100 ms until it succeeds. It gives up when the
// process exits (there is no point waiting for a dead process) or ctx ends,
// with the last check error and the end of the log either way.
func (p *Process) WaitFor(ctx context.Context, what string, check func(context.Context) error) error {
	ticker := time.NewTicker(100 * time.Millisecond)
	defer ticker.Stop()
	var last error
	for {
		checkCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := check(checkCtx)
		cancel()
		if err == nil {
			return nil
		}
		if ctx.Err() == nil {
			last = err
		}
		select {
		case <-p.exited:
			return fmt.Errorf("%s exited (%v) before %s\n%s", filepath.Base(p.spec.Path), p.err, what, p.Tail(25))
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s of %s: %w (last error: %v)\n%s", what, filepath.Base(p.spec.Path), ctx.Err(), last, p.Tail(25))
		case <-ticker.C:
		}
	}
}

// Tail is the end of the process's log, for failure messages.
func (p *Process) Tail(lines int) string { return Tail(p.spec.LogPath, lines) }

// Tail is the last n lines of the file at path (of its last 64 KiB).
func Tail(path string, n int) string {
	const maxBytes = 64 << 10
	f, err := os.Open(path)
	if err != nil {
		return err.Error()
	}
	defer func() { _ = f.Close() }()
	if fi, err := f.Stat(); err == nil && fi.Size() > maxBytes {
		_, _ = f.Seek(-maxBytes, io.SeekEnd)
	}
	b, _ := io.ReadAll(f)
	lines := bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return fmt.Sprintf("--- last %d lines of %s ---\n%s", len(lines), path, bytes.Join(lines, []byte("\n")))
}
