package localcluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// process is one child process of the cluster. It can be started again after
// a stop, with the same arguments, which is what the fault tests rely on.
type process struct {
	component   Component
	path        string
	args        []string
	dir         string
	logPath     string
	stopTimeout time.Duration

	// cur is the current run, nil when the process was never started or
	// has been stopped.
	cur *run
}

// run is one execution of a process; each restart gets a fresh one, so the
// goroutine reaping an old run never touches the state of a new one.
type run struct {
	cmd *exec.Cmd
	// done is closed once the process has exited and been reaped; err is
	// valid after that.
	done chan struct{}
	err  error
}

func (r *run) exited() bool {
	select {
	case <-r.done:
		return true
	default:
		return false
	}
}

// start launches the process with its output appended to its log file, so a
// restarted process keeps the history of the earlier runs.
func (p *process) start() error {
	if p.running() {
		return fmt.Errorf("%s is already running (pid %d)", p.component, p.cur.cmd.Process.Pid)
	}
	logFile, err := os.OpenFile(p.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	_, _ = fmt.Fprintf(logFile, "=== localcluster: %s starting %s %s\n",
		time.Now().Format(time.RFC3339Nano), p.path, strings.Join(p.args, " "))

	cmd := exec.Command(p.path, p.args...)
	cmd.Dir = p.dir
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{
		// A group of its own lets stop signal everything the process may
		// have spawned, and keeps a terminal's Ctrl-C away from it: the
		// launcher decides the shutdown order, not the terminal.
		Setpgid: true,
		// If the launcher dies without Stop (a crashed or killed test
		// binary), the kernel kills the children instead of leaving a
		// control plane running on the machine.
		Pdeathsig: syscall.SIGKILL,
	}
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		return fmt.Errorf("starting %s: %w", p.component, err)
	}
	r := &run{cmd: cmd, done: make(chan struct{})}
	p.cur = r
	go func() {
		err := cmd.Wait()
		_, _ = fmt.Fprintf(logFile, "=== localcluster: %s %s exited: %v\n",
			time.Now().Format(time.RFC3339Nano), p.component, exitStatus(err))
		_ = logFile.Close()
		r.err = err
		close(r.done)
	}()
	return nil
}

func exitStatus(err error) string {
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}

// running reports whether the process was started and has not exited.
func (p *process) running() bool {
	return p.cur != nil && !p.cur.exited()
}

// pid returns the process id, or 0 when the process is not running.
func (p *process) pid() int {
	if !p.running() {
		return 0
	}
	return p.cur.cmd.Process.Pid
}

// stop sends SIGTERM to the process group, waits up to stopTimeout, then
// sends SIGKILL, and always waits until the process is reaped, so that a
// caller restarting it finds the port free. Stopping a process that is not
// running is not an error.
func (p *process) stop() error {
	return p.terminate(syscall.SIGTERM)
}

// kill is stop without the grace: SIGKILL at once, as a crash would.
func (p *process) kill() error {
	return p.terminate(syscall.SIGKILL)
}

func (p *process) terminate(sig syscall.Signal) error {
	r := p.cur
	if r == nil {
		return nil
	}
	p.cur = nil
	pgid := r.cmd.Process.Pid

	var timeoutErr error
	select {
	case <-r.done:
		// Exited on its own; the exit was logged, there is nothing to report
		// to a caller that wanted it gone anyway.
	default:
		_ = syscall.Kill(-pgid, sig)
		timer := time.NewTimer(p.stopTimeout)
		select {
		case <-r.done:
			timer.Stop()
		case <-timer.C:
			timeoutErr = fmt.Errorf("%s did not exit within %s of SIGTERM; killed it", p.component, p.stopTimeout)
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			<-r.done
		}
	}
	// Anything the process spawned and left behind in its group goes too.
	if err := syscall.Kill(-pgid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return errors.Join(timeoutErr, fmt.Errorf("killing process group of %s: %w", p.component, err))
	}
	return timeoutErr
}

// exitedError describes an unexpected exit, with the end of the log, since
// that is where the reason is.
func (p *process) exitedError(r *run) error {
	return fmt.Errorf("%s exited during start-up (%s); last lines of %s:\n%s",
		p.component, exitStatus(r.err), p.logPath, p.logTail())
}

// logTail returns the last lines of the log file.
func (p *process) logTail() string {
	const maxBytes, maxLines = 8 << 10, 25
	f, err := os.Open(p.logPath)
	if err != nil {
		return err.Error()
	}
	defer func() { _ = f.Close() }()
	if fi, err := f.Stat(); err == nil && fi.Size() > maxBytes {
		_, _ = f.Seek(-maxBytes, io.SeekEnd)
	}
	data, _ := io.ReadAll(f)
	lines := bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
	if len(lines) > maxLines {
		lines = lines[len(lines)-maxLines:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}

// waitFor polls check until it succeeds. It gives up when the process exits
// (no point waiting for a dead process) or when ctx ends, reporting the last
// check error and the end of the log either way.
func (p *process) waitFor(ctx context.Context, what string, check func(context.Context) error) error {
	r := p.cur
	if r == nil {
		return fmt.Errorf("%s is not running", p.component)
	}
	const interval = 100 * time.Millisecond
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		checkCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
		lastErr := check(checkCtx)
		cancel()
		if lastErr == nil {
			return nil
		}
		select {
		case <-r.done:
			return p.exitedError(r)
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s %s: %w (last error: %v); last lines of %s:\n%s",
				p.component, what, ctx.Err(), lastErr, p.logPath, p.logTail())
		case <-ticker.C:
		}
	}
}
