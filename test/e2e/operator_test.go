package e2e

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/example-inc/memcached-operator/test/fixtures"
)

// buildOperator builds the manager binary (the module's main package) to
// path, as `make build` does.
func buildOperator(path string) error {
	cmd := exec.Command("go", "build", "-o", path, ".")
	cmd.Dir = fixtures.RepoRoot()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build: %w\n%s", err, out.String())
	}
	return nil
}

// operatorProcess is the manager binary running on the host.
type operatorProcess struct {
	cmd     *exec.Cmd
	logPath string
	exited  chan struct{}
	err     error
}

// startOperator runs the binary with args and KUBECONFIG, its output going
// to logPath.
func startOperator(binary, kubeconfig, logPath string, args ...string) (*operatorProcess, error) {
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(binary, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// Its own process group, so that stopping it cannot reach the test.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		return nil, err
	}
	p := &operatorProcess{cmd: cmd, logPath: logPath, exited: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		_ = logFile.Close()
		close(p.exited)
	}()
	return p, nil
}

// running reports whether the process has not exited.
func (p *operatorProcess) running() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// stop sends SIGTERM, as kubelet does, and SIGKILL if the manager has not
// exited after timeout.
func (p *operatorProcess) stop(timeout time.Duration) error {
	if !p.running() {
		return nil
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
		return nil
	case <-time.After(timeout):
		_ = p.cmd.Process.Kill()
		<-p.exited
		return errors.New("the operator did not stop on SIGTERM")
	}
}

// freePort is a TCP port on 127.0.0.1 that nothing listens on right now.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// servedCertificateSerial is the serial number of the certificate a TLS
// server at 127.0.0.1:port presents: which certificate it serves, not
// whether it is trusted (the API server checks that).
func servedCertificateSerial(ctx context.Context, port int) (*big.Int, error) {
	d := tls.Dialer{
		NetDialer: &net.Dialer{Timeout: 2 * time.Second},
		Config:    &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // reads the certificate, trusts nothing
	}
	conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return nil, err
	}
	defer func() { _ = conn.Close() }()
	return conn.(*tls.Conn).ConnectionState().PeerCertificates[0].SerialNumber, nil
}

// tail is the end of a file, for failure messages.
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := bytes.Split(b, []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return fmt.Sprintf("--- last %d lines of %s ---\n%s", len(lines), filepath.Base(path), bytes.Join(lines, []byte("\n")))
}
