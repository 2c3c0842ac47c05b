package memcachedtls

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"strings"
	"time"
)

// command sends one text-protocol command to memcached's plain loopback
// listener at addr and returns its one-line answer, all within timeout.
func command(ctx context.Context, addr, cmd string, timeout time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
	if err != nil {
		return "", err
	}
	defer func() { _ = conn.Close() }()
	deadline, _ := ctx.Deadline()
	if err := conn.SetDeadline(deadline); err != nil {
		return "", err
	}
	if _, err := fmt.Fprintf(conn, "%s\r\n", cmd); err != nil {
		return "", err
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		return "", fmt.Errorf("%s: no answer from memcached at %s: %w", cmd, addr, err)
	}
	return strings.TrimRight(line, "\r\n"), nil
}

// refreshCerts makes memcached load its certificate, key and CA again
// from their files. memcached answers OK, or an error line saying which
// file it could not load.
func refreshCerts(ctx context.Context, addr string) error {
	answer, err := command(ctx, addr, "refresh_certs", 10*time.Second)
	if err != nil {
		return err
	}
	if answer != "OK" {
		return fmt.Errorf("memcached at %s refused refresh_certs: %s", addr, answer)
	}
	return nil
}

// version asks memcached for its version: an answer means that it is up
// and serving requests.
func version(ctx context.Context, addr string, timeout time.Duration) (string, error) {
	answer, err := command(ctx, addr, "version", timeout)
	if err != nil {
		return "", err
	}
	v, ok := strings.CutPrefix(answer, "VERSION ")
	if !ok {
		return "", fmt.Errorf("memcached at %s answered version with %q", addr, answer)
	}
	return v, nil
}
