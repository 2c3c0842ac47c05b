package process

import (
	"context"
	"errors"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/gomega"
)

// sleepSpec runs sleep(1) for a minute. coreutils is on every machine the
// tests run on; a missing sleep fails rather than skips.
func sleepSpec(t *testing.T) Spec {
	t.Helper()
	return Spec{Path: "/bin/sleep", Args: []string{"60"}, LogPath: filepath.Join(t.TempDir(), "p.log")}
}

func TestStopKillAndLog(t *testing.T) {
	for name, end := range map[string]func(*Process) error{
		"stop": func(p *Process) error { return p.Stop(10 * time.Second) },
		"kill": (*Process).Kill,
	} {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			p, err := Start(sleepSpec(t))
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(p.Running()).To(BeTrue(), "not running right after Start")
			g.Expect(end(p)).To(Succeed())
			if p.Running() || p.Err() == nil {
				t.Fatalf("running=%v err=%v after %s", p.Running(), p.Err(), name)
			}
			if tail := p.Tail(5); !strings.Contains(tail, "starting /bin/sleep 60") || !strings.Contains(tail, "exited: signal") {
				t.Errorf("log does not record the start and the signal:\n%s", tail)
			}
			if err := end(p); err != nil {
				t.Errorf("second %s: %v", name, err)
			}
		})
	}
}

// TestInterruptOnTerminal: Ctrl-C typed on the terminal reaches the
// foreground process, which ends as it chooses (here exit 0), and the log
// has its output with plain line ends.
func TestInterruptOnTerminal(t *testing.T) {
	spec := Spec{Path: "/bin/sh", Args: []string{"-c", `trap 'echo interrupted; exit 0' INT; echo ready; while :; do sleep 0.1; done`},
		LogPath: filepath.Join(t.TempDir(), "p.log"), Terminal: true}
	g := NewWithT(t)
	p, err := Start(spec)
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = p.Kill() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	g.Expect(p.WaitFor(ctx, "ready", func(context.Context) error {
		if !strings.Contains(p.Tail(5), "\nready") {
			return errors.New("not yet")
		}
		return nil
	})).To(Succeed())
	g.Expect(p.Interrupt()).To(Succeed())
	select {
	case <-p.Exited():
	case <-ctx.Done():
		t.Fatalf("still running after Ctrl-C\n%s", p.Tail(5))
	}
	if p.Err() != nil {
		t.Errorf("exit: %v, want status 0", p.Err())
	}
	if tail := p.Tail(5); !strings.Contains(tail, "ready\n") || !strings.Contains(tail, "interrupted\n") || strings.Contains(tail, "\r") {
		t.Errorf("log does not hold the output with plain line ends:\n%q", tail)
	}
	if err := (&Process{}).Interrupt(); err == nil {
		t.Error("Interrupt without a terminal: no error")
	}
}

func TestStopEscalatesToKill(t *testing.T) {
	// A shell that ignores SIGTERM: Stop must kill it and say so.
	spec := Spec{Path: "/bin/sh", Args: []string{"-c", "trap '' TERM; sleep 60 & wait"}, LogPath: filepath.Join(t.TempDir(), "p.log")}
	g := NewWithT(t)
	p, err := Start(spec)
	g.Expect(err).NotTo(HaveOccurred())
	// Let the shell install its trap first.
	g.Expect(p.WaitFor(context.Background(), "the trap", func(context.Context) error {
		if !ignores(p.PID(), syscall.SIGTERM) {
			return errors.New("SIGTERM not ignored yet")
		}
		return nil
	})).To(Succeed())
	err = p.Stop(200 * time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "killed it") {
		t.Errorf("Stop of a process ignoring SIGTERM = %v, want an error saying it was killed", err)
	}
	if p.Running() {
		t.Error("still running after Stop")
	}
}

func TestWaitFor(t *testing.T) {
	ready := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		select {
		case <-ready:
		default:
			http.Error(w, "not yet", http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	p, err := Start(sleepSpec(t))
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	defer func() { _ = p.Kill() }()

	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if err := p.WaitFor(ctx, "readiness", HTTPOK(srv.URL)); err == nil || !strings.Contains(err.Error(), "503") {
		t.Errorf("WaitFor on a 503 endpoint = %v, want a timeout naming the 503", err)
	}
	close(ready)
	if err := p.WaitFor(context.Background(), "readiness", HTTPOK(srv.URL)); err != nil {
		t.Errorf("WaitFor on a ready endpoint: %v", err)
	}
	_ = p.Kill()
	if err := p.WaitFor(context.Background(), "readiness", HTTPOK("http://127.0.0.1:1/")); err == nil || !strings.Contains(err.Error(), "exited") {
		t.Errorf("WaitFor after exit = %v, want the exit reported", err)
	}
}

// TestGetAsksForNoCompression: a server that compresses spends CPU on it,
// and the server is often the operator a benchmark measures.
func TestGetAsksForNoCompression(t *testing.T) {
	var encoding []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		encoding = r.Header.Values("Accept-Encoding")
		_, _ = w.Write([]byte("ok"))
	}))
	defer srv.Close()
	if body, err := Get(context.Background(), srv.URL); err != nil || body != "ok" {
		t.Fatalf("Get = %q, %v", body, err)
	}
	if len(encoding) != 0 {
		t.Errorf("Get sent Accept-Encoding %q, want none", encoding)
	}
}

func TestReadUsageOfThisProcess(t *testing.T) {
	// Burn a little CPU so utime is measurable at 10 ms resolution.
	deadline := time.Now().Add(50 * time.Millisecond)
	for time.Now().Before(deadline) {
	}
	u, err := ReadUsage(os.Getpid())
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	if u.CPUSeconds <= 0 || u.RSSBytes <= 0 || u.PeakRSSBytes < u.RSSBytes {
		t.Errorf("usage %+v: want CPU > 0 and 0 < RSS <= peak RSS", u)
	}
	// The test binary's own pages are mapped from its file.
	if u.FileRSSBytes <= 0 || u.FileRSSBytes >= u.RSSBytes {
		t.Errorf("usage %+v: want 0 < file-backed RSS < RSS", u)
	}
}

func TestReadEnviron(t *testing.T) {
	spec := sleepSpec(t)
	spec.Env = []string{"PLAIN=1", "WITH_EQUALS=a=b", "EMPTY="}
	g := NewWithT(t)
	p, err := Start(spec)
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = p.Kill() }()
	// Start returns once execve has begun; the kernel sets the new
	// environment up a moment later, so an early read finds none.
	var env map[string]string
	g.Expect(p.WaitFor(context.Background(), "its environment", func(context.Context) (err error) {
		if env, err = ReadEnviron(p.PID()); err == nil && len(env) == 0 {
			err = errors.New("empty environment")
		}
		return err
	})).To(Succeed())
	if want := map[string]string{"PLAIN": "1", "WITH_EQUALS": "a=b", "EMPTY": ""}; !maps.Equal(env, want) {
		t.Errorf("ReadEnviron = %v, want %v", env, want)
	}
}

// ignores reports whether process pid ignores sig, from the SigIgn mask in
// /proc/<pid>/status (which also holds what the test inherited ignored).
func ignores(pid int, sig syscall.Signal) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if mask, ok := strings.CutPrefix(line, "SigIgn:\t"); ok {
			v, err := strconv.ParseUint(mask, 16, 64)
			return err == nil && v&(1<<(uint(sig)-1)) != 0
		}
	}
	return false
}
