package localcluster

import (
	"bufio"
	"errors"
	"io"
	"net"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/example-inc/memcached-operator/certs/certstest"
)

func TestAPIServerRelay(t *testing.T) {
	g := NewWithT(t)
	// An upper-casing echo server stands for the API server; ended gets a
	// value for each connection it sees end.
	ended := make(chan struct{}, 8)
	server := certstest.ServeConn(t, nil, func(c net.Conn) {
		for s := bufio.NewScanner(c); s.Scan(); {
			_, _ = io.WriteString(c, strings.ToUpper(s.Text())+"\n")
		}
		ended <- struct{}{}
	})

	// A URL, not an address: refused at once.
	if _, err := relayAPIServer("https://" + server); err == nil {
		t.Fatal("relayAPIServer took a URL for its target")
	}
	r, err := relayAPIServer(server)
	g.Expect(err).NotTo(HaveOccurred())
	c, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(r.port())))
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = c.Close() }()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	_, err = io.WriteString(c, "get pods\n")
	g.Expect(err).NotTo(HaveOccurred())
	got, err := bufio.NewReader(c).ReadString('\n')
	if err != nil || got != "GET PODS\n" {
		t.Fatalf("through the relay: %q, %v; want %q", got, err, "GET PODS\n")
	}

	// A client that goes away ends its connection to the server too.
	gone, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(r.port())))
	g.Expect(err).NotTo(HaveOccurred())
	_ = gone.Close()
	select {
	case <-ended:
	case <-time.After(5 * time.Second):
		t.Fatal("the server's side stayed open after its client left")
	}

	// close ends a connection still open (a watch), not only the listener.
	g.Expect(r.close()).To(Succeed(), "close")
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	n, err := c.Read(make([]byte, 1))
	var netErr net.Error
	if err == nil || (errors.As(err, &netErr) && netErr.Timeout()) {
		t.Fatalf("after close: read %d bytes, %v; want the connection ended", n, err)
	}
	if _, err := net.Dial("tcp", r.ln.Addr().String()); err == nil {
		t.Fatal("the relay still accepts after close")
	}
}

func TestComponentEnvDropsProxyVariables(t *testing.T) {
	for _, kv := range []string{"HTTP_PROXY=http://127.0.0.1:1", "https_proxy=http://127.0.0.1:1", "NO_PROXY=.corp", "all_proxy=socks5://127.0.0.1:1"} {
		name, value, _ := strings.Cut(kv, "=")
		t.Setenv(name, value)
	}
	t.Setenv("LOCALCLUSTER_TEST_KEPT", "yes")
	env := componentEnv()
	for _, kv := range env {
		if name, _, _ := strings.Cut(kv, "="); strings.HasSuffix(strings.ToUpper(name), "_PROXY") {
			t.Errorf("the cluster's processes get %s", kv)
		}
	}
	if !slices.Contains(env, "LOCALCLUSTER_TEST_KEPT=yes") {
		t.Error("componentEnv dropped a variable that is not a proxy's")
	}
}
