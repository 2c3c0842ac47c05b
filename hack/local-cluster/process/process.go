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

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
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
	// Terminal runs the process as a person's terminal would: in a session
	// of its own, on a pseudo-terminal that is its stdin, stdout, stderr
	// and controlling terminal, so that Interrupt is a typed Ctrl-C that
	// reaches only the terminal's foreground process group. Its output
	// reaches LogPath with plain "\n" line ends.
	Terminal bool
}

// Process is one run of a Spec. Start it again with Start(p.Spec()).
type Process struct {
	spec   Spec
	cmd    *exec.Cmd
	exited chan struct{}
	err    error
	// terminal is the pseudo-terminal's controlling side, nil without
	// Spec.Terminal.
	terminal *os.File
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
	p := &Process{spec: spec, cmd: cmd, exited: make(chan struct{})}
	copied := make(chan struct{})
	if spec.Terminal {
		var err error
		if p.terminal, err = startOnTerminal(cmd, logFile, copied); err != nil {
			_ = logFile.Close()
			return nil, fmt.Errorf("starting %s on a terminal: %w", filepath.Base(spec.Path), err)
		}
	} else {
		close(copied)
		if err := cmd.Start(); err != nil {
			_ = logFile.Close()
			return nil, fmt.Errorf("starting %s: %w", filepath.Base(spec.Path), err)
		}
	}
	go func() {
		p.err = cmd.Wait()
		p.closeTerminal(copied)
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

// startOnTerminal starts cmd in a session of its own on a new
// pseudo-terminal, whose output it copies to log until the terminal closes
// (then it closes copied).
func startOnTerminal(cmd *exec.Cmd, log io.Writer, copied chan<- struct{}) (*os.File, error) {
	ptm, tty, err := pty.Open()
	if err != nil {
		return nil, err
	}
	defer func() { _ = tty.Close() }()
	// No "\r" before each "\n": the log is read as text. Everything else,
	// Ctrl-C's signal included, stays as a terminal has it.
	t, err := unix.IoctlGetTermios(int(tty.Fd()), unix.TCGETS)
	if err == nil {
		t.Oflag &^= unix.ONLCR
		err = unix.IoctlSetTermios(int(tty.Fd()), unix.TCSETS, t)
	}
	if err != nil {
		_ = ptm.Close()
		return nil, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		_ = ptm.Close()
		return nil, err
	}
	go func() {
		defer close(copied)
		// Ends with EIO once no process holds the terminal any more.
		_, _ = io.Copy(log, ptm)
	}()
	return ptm, nil
}

// closeTerminal lets the copy of the terminal's output finish, for as long
// as something the process left behind still writes to it (at most a few
// seconds), then closes the terminal, which hangs up whatever still holds it.
func (p *Process) closeTerminal(copied <-chan struct{}) {
	select {
	case <-copied:
	case <-time.After(5 * time.Second):
	}
	if p.terminal != nil {
		_ = p.terminal.Close()
		<-copied
	}
}

// Interrupt types Ctrl-C on the process's terminal (Spec.Terminal): the
// terminal sends SIGINT to its foreground process group, as for a person.
func (p *Process) Interrupt() error {
	if p.terminal == nil {
		return errors.New("the process has no terminal: start it with Spec.Terminal")
	}
	_, err := p.terminal.Write([]byte{0x03})
	return err
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
