package memcache

import (
	"bufio"
	"context"
	"errors"
	"net"
	"strings"
	"testing"
)

// fakeServer answers each request line with the next canned answer, as
// memcached would; the real one is exercised on the real node (test/e2e).
func fakeServer(t *testing.T, answers ...string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	go func() {
		conn, err := l.Accept()
		if err != nil {
			return
		}
		defer func() { _ = conn.Close() }()
		r := bufio.NewReader(conn)
		for _, a := range answers {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			if strings.HasPrefix(line, "set ") {
				if _, err := r.ReadString('\n'); err != nil { // the data block
					return
				}
			}
			if _, err := conn.Write([]byte(a)); err != nil {
				return
			}
		}
	}()
	return l.Addr().String()
}

func TestClient(t *testing.T) {
	addr := fakeServer(t, "STORED\r\n", "VALUE k 0 5\r\nhello\r\nEND\r\n", "END\r\n",
		"STAT maxbytes 67108864\r\nSTAT item_size_max 1048576\r\nSTAT evictions on\r\nEND\r\n", "SERVER_ERROR out of memory\r\n")
	c, err := Dial(context.Background(), addr)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	if err := c.Set("k", []byte("hello")); err != nil {
		t.Fatal(err)
	}
	if v, err := c.Get("k"); err != nil || string(v) != "hello" {
		t.Fatalf("Get = %q, %v", v, err)
	}
	if _, err := c.Get("missing"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get of a missing key = %v, want ErrNotFound", err)
	}
	s, err := c.StatsSettings()
	if err != nil || s["maxbytes"] != "67108864" || s["item_size_max"] != "1048576" || s["evictions"] != "on" {
		t.Fatalf("StatsSettings = %v, %v", s, err)
	}
	if err := c.Set("k", []byte("x")); err == nil || !strings.Contains(err.Error(), "SERVER_ERROR out of memory") {
		t.Fatalf("Set refused by the server = %v", err)
	}
}

func TestRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name, get, wantErr string
	}{
		{"the value stored", "VALUE k 0 5\r\nhello\r\nEND\r\n", ""},
		{"another value", "VALUE k 0 5\r\nhellO\r\nEND\r\n", `get k returned "hellO", not the "hello" stored`},
		{"nothing", "END\r\n", "memcache: not found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := RoundTrip(context.Background(), fakeServer(t, "STORED\r\n", tc.get), "k", []byte("hello"))
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || err.Error() != tc.wantErr) {
				t.Fatalf("RoundTrip = %v, want error %q", err, tc.wantErr)
			}
		})
	}
}
