package operatorproc

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestEnvironKeepsOperatorVariablesOut(t *testing.T) {
	t.Setenv("HTTPS_PROXY", "http://user:secret@proxy:3128")
	t.Setenv("WATCH_NAMESPACE", "from-the-shell")
	t.Setenv("PATH_FOR_TEST", "kept")
	env := Options{Kubeconfig: "/k", Env: []string{"WATCH_NAMESPACE=given"}}.Environ()
	for _, want := range []string{"KUBECONFIG=/k", "WATCH_NAMESPACE=given", "PATH_FOR_TEST=kept"} {
		if !slices.Contains(env, want) {
			t.Errorf("environment lacks %s", want)
		}
	}
	for _, kv := range env {
		if strings.HasPrefix(kv, "HTTPS_PROXY=") || kv == "WATCH_NAMESPACE=from-the-shell" {
			t.Errorf("the test's %s leaked into the operator's environment", kv)
		}
	}
}

func TestStopKillAndLog(t *testing.T) {
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip(err)
	}
	for name, end := range map[string]func(*Process) error{
		"stop": func(p *Process) error { return p.Stop(10 * time.Second) },
		"kill": (*Process).Kill,
	} {
		t.Run(name, func(t *testing.T) {
			log := filepath.Join(t.TempDir(), "op.log")
			p, err := Start(Options{Binary: sleep, Args: []string{"60"}, LogPath: log, Dir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			if !p.Running() {
				t.Fatal("not running right after Start")
			}
			if err := end(p); err != nil {
				t.Fatal(err)
			}
			if p.Running() || p.Err() == nil {
				t.Fatalf("running=%v err=%v after %s", p.Running(), p.Err(), name)
			}
			if tail := p.Tail(5); !strings.Contains(tail, "starting "+sleep+" 60") || !strings.Contains(tail, "exited: signal") {
				t.Errorf("log does not record the start and the signal:\n%s", tail)
			}
			if err := end(p); err != nil {
				t.Errorf("second %s: %v", name, err)
			}
		})
	}
}

func TestWaitHTTP(t *testing.T) {
	ready := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		select {
		case <-ready:
		default:
			http.Error(w, "not yet", http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip(err)
	}
	p, err := Start(Options{Binary: sleep, Args: []string{"60"}, LogPath: filepath.Join(t.TempDir(), "log")})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = p.Kill() }()

	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if err := p.WaitHTTP(ctx, srv.URL); err == nil || !strings.Contains(err.Error(), "503") {
		t.Errorf("WaitHTTP on a 503 endpoint = %v, want a timeout naming the 503", err)
	}
	close(ready)
	if err := p.WaitHTTP(context.Background(), srv.URL); err != nil {
		t.Errorf("WaitHTTP on a ready endpoint: %v", err)
	}
	_ = p.Kill()
	if err := p.WaitHTTP(context.Background(), "http://127.0.0.1:1/"); err == nil || !strings.Contains(err.Error(), "exited") {
		t.Errorf("WaitHTTP after exit = %v, want the exit reported", err)
	}
}

func TestFreePortsDistinct(t *testing.T) {
	ports, err := FreePorts(5)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(ports)
	if len(slices.Compact(ports)) != 5 {
		t.Errorf("FreePorts(5) = %v, want 5 distinct ports", ports)
	}
}

func TestReadUsageOfThisProcess(t *testing.T) {
	// Burn a little CPU so utime is measurable at 10 ms resolution.
	deadline := time.Now().Add(50 * time.Millisecond)
	for time.Now().Before(deadline) {
	}
	u, err := ReadUsage(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if u.CPUSeconds <= 0 || u.RSSBytes <= 0 || u.PeakRSSBytes < u.RSSBytes {
		t.Errorf("usage %+v: want CPU > 0 and 0 < RSS <= peak RSS", u)
	}
}
