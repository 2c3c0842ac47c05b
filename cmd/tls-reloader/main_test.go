package main

import (
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/example-inc/memcached-operator/certs/certstest"
	"github.com/example-inc/memcached-operator/certs/memcachedtls"
)

// runMainEnv makes the test binary run main with its arguments, so the
// tests run the command as the pod does, exit code included.
const runMainEnv = "TLS_RELOADER_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// command is tls-reloader with args.
func command(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), runMainEnv+"=1")
	return cmd
}

// TestCheckCommand is the init container: a usable Secret exits 0; an
// unusable one exits 1 with the one-line problem in the termination log,
// where kubelet finds it, and on stderr.
func TestCheckCommand(t *testing.T) {
	c := certstest.NewTestCA(t).IssueLoopback(t, certstest.CertOptions{})
	valid := map[string][]byte{memcachedtls.CertFile: c.CertPEM, memcachedtls.KeyFile: c.KeyPEM}
	tests := []struct {
		name string
		data map[string][]byte
		args []string
		// want is the termination message; "" for exit 0.
		want string
	}{
		{name: "usable", data: valid},
		{name: "no Secret", data: map[string][]byte{},
			want: `Secret "web-tls" does not exist or holds no keys: it needs tls.crt and tls.key`},
		{name: "no ca.crt with client certificates required", data: valid, args: []string{"--client-ca"},
			want: `Secret "web-tls": ca.crt is missing`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "tls")
			NewWithT(t).Expect(certstest.WriteSecretVolume(dir, tt.data)).To(Succeed())
			termLog := filepath.Join(t.TempDir(), "termination-log")
			cmd := command(t, append([]string{"check", "--dir=" + dir, "--secret=web-tls", "--termination-log=" + termLog}, tt.args...)...)
			stderr, err := cmd.CombinedOutput()
			logged, readErr := os.ReadFile(termLog)
			if tt.want == "" {
				if err != nil || !errors.Is(readErr, os.ErrNotExist) {
					t.Errorf("check: %v, termination log %q; want exit 0 and no termination log\n%s", err, logged, stderr)
				}
				return
			}
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 1 {
				t.Errorf("check: %v, want exit status 1", err)
			}
			if string(logged) != tt.want || string(stderr) != tt.want+"\n" {
				t.Errorf("termination log %q, stderr %q; want %q in both, a line on stderr", logged, stderr, tt.want)
			}
		})
	}
}

// TestRunExitsOnSIGTERM: kubelet stops the sidecar with SIGTERM, and it
// must exit at once and with 0, so that the pod's deletion is not held for
// its grace period.
func TestRunExitsOnSIGTERM(t *testing.T) {
	g := NewWithT(t)
	ports, err := certstest.FreePorts(2)
	g.Expect(err).NotTo(HaveOccurred())
	health := "127.0.0.1:" + strconv.Itoa(ports[0])
	cmd := command(t, "run", "--dir="+t.TempDir(), "--secret=web-tls",
		"--memcached=127.0.0.1:"+strconv.Itoa(ports[1]), "--health="+health)
	g.Expect(cmd.Start()).To(Succeed())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() { _ = cmd.Process.Kill() })

	// Serving /readyz (503: no memcached) means the signal handler is set.
	g.Eventually(func() (int, error) {
		resp, err := http.Get("http://" + health + "/readyz")
		if err != nil {
			return 0, err
		}
		_ = resp.Body.Close()
		return resp.StatusCode, nil
	}).WithTimeout(10 * time.Second).WithPolling(20 * time.Millisecond).Should(Equal(http.StatusServiceUnavailable))
	g.Expect(cmd.Process.Signal(syscall.SIGTERM)).To(Succeed())
	g.Eventually(exited).WithTimeout(3*time.Second).Should(Receive(BeNil()), "exit status after SIGTERM")
}

func TestParseArgs(t *testing.T) {
	for name, args := range map[string][]string{
		"no subcommand":         {},
		"an unknown subcommand": {"serve", "--secret=a"},
		"no --secret":           {"run"},
		"a zero interval":       {"run", "--secret=a", "--interval=0s"},
		"a run flag for check":  {"check", "--secret=a", "--memcached=127.0.0.1:1"},
		"a stray argument":      {"check", "--secret=a", "extra"},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := parseArgs(args, io.Discard); err == nil {
				t.Errorf("parseArgs(%q) accepted it", args)
			}
		})
	}
	o, err := parseArgs([]string{"run", "--secret=web-tls", "--client-ca"}, io.Discard)
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	want := memcachedtls.Options{
		Secret:        memcachedtls.Secret{Dir: "/etc/memcached/tls", Name: "web-tls", ClientCA: true},
		MemcachedAddr: "127.0.0.1:11212", HealthAddr: ":11213", Interval: 2 * time.Second,
	}
	if o.command != commandRun || o.run != want {
		t.Errorf("parseArgs = %+v, want run with %+v", o, want)
	}
}
