package memcachedproc

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/example-inc/memcached-operator/certs/certstest"
	"github.com/example-inc/memcached-operator/hack/local-cluster/process"
)

// Server is a memcached started by Start.
type Server struct {
	*process.Process
	// Addr is where it listens, 127.0.0.1:port unless StartAt chose.
	Addr string
}

// Args are the arguments of cmd, a memcached command line as the operator
// builds it (the binary first), made to run on the host: listening on
// 127.0.0.1:port alone, without UDP, and as nobody when run as root, which
// memcached refuses otherwise. None of them changes how memcached serves.
func Args(cmd []string, port int) []string {
	return argsAt(cmd, "127.0.0.1", port)
}

func argsAt(cmd []string, host string, port int) []string {
	args := append(append([]string{}, cmd[1:]...), "--listen="+host, "--port="+strconv.Itoa(port), "--udp-port=0")
	if os.Geteuid() == 0 {
		args = append(args, "--user=nobody")
	}
	return args
}

// Start runs cmd (see Args) with the shipped release on a free loopback
// port, its output in logPath, and returns once it accepts connections.
func Start(ctx context.Context, cmd []string, logPath string) (*Server, error) {
	return Shipped().Start(ctx, cmd, logPath)
}

// Start runs cmd (see Args) with release r, as the package's Start does.
func (r Release) Start(ctx context.Context, cmd []string, logPath string) (*Server, error) {
	if len(cmd) == 0 {
		return nil, errors.New("memcachedproc: empty command")
	}
	ports, err := certstest.FreePorts(1)
	if err != nil {
		return nil, err
	}
	return r.StartAt(ctx, cmd, "127.0.0.1", ports[0], logPath)
}

// Run starts cmd with release r for the test t, its log in t's temporary
// directory, and stops it when t ends; t fails if it does not serve
// within 30 s.
func (r Release) Run(t testing.TB, cmd []string) *Server {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv, err := r.Start(ctx, cmd, filepath.Join(t.TempDir(), "memcached.log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Stop(10 * time.Second) })
	return srv
}

// StartAt runs cmd with release r listening on host:port, a loopback
// address of the test's choice: tests that stand memcached in for pods
// give each its own address and the pods' one port.
func (r Release) StartAt(ctx context.Context, cmd []string, host string, port int, logPath string) (*Server, error) {
	if len(cmd) == 0 {
		return nil, errors.New("memcachedproc: empty command")
	}
	bin, args, err := r.Command(argsAt(cmd, host, port)...)
	if err != nil {
		return nil, err
	}
	p, err := process.Start(process.Spec{Path: bin, Args: args, LogPath: logPath})
	if err != nil {
		return nil, err
	}
	s := &Server{Process: p, Addr: net.JoinHostPort(host, strconv.Itoa(port))}
	err = p.WaitFor(ctx, "listening on "+s.Addr, func(ctx context.Context) error {
		conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", s.Addr)
		if err != nil {
			return err
		}
		return conn.Close()
	})
	if err != nil {
		return nil, errors.Join(err, p.Stop(10*time.Second))
	}
	return s, nil
}
