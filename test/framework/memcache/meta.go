package memcache

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// The meta commands of memcached 1.6, for a fill: sets pipelined in quiet
// mode, and a no-op whose answer says every request before it was answered.

// Noop sends mn and returns memcached's answer: MN once it answered every
// request sent before, as it answers in order. A memcached over its
// connection limit answers an error instead, and closes the connection.
func (c *Client) Noop() (string, error) {
	if err := c.deadline(); err != nil {
		return "", err
	}
	return c.noop()
}

func (c *Client) noop() (string, error) {
	_, _ = c.w.WriteString("mn\r\n")
	if err := c.w.Flush(); err != nil {
		return "", err
	}
	return c.line()
}

// SetQuiet stores value under key(i) for each i below n, pipelined in quiet
// mode (memcached answers only a failure), and returns the failures'
// answers once a no-op's answer says memcached read them all.
func (c *Client) SetQuiet(n int, key func(int) string, value []byte) ([]string, error) {
	if err := c.deadline(); err != nil {
		return nil, err
	}
	size := strconv.Itoa(len(value))
	for i := range n {
		c.writeMetaSet(key(i), size, " q", value)
	}
	l, err := c.noop()
	var failed []string
	for ; err == nil && l != "MN"; l, err = c.line() {
		failed = append(failed, l)
	}
	return failed, err
}

// MetaSet stores value under key and returns memcached's answer: HD when
// it stored it.
func (c *Client) MetaSet(key string, value []byte) (string, error) {
	if err := c.deadline(); err != nil {
		return "", err
	}
	c.writeMetaSet(key, strconv.Itoa(len(value)), "", value)
	if err := c.w.Flush(); err != nil {
		return "", err
	}
	return c.line()
}

// The buffer's errors are sticky: the Flush that follows reports them.
func (c *Client) writeMetaSet(key, size, flags string, value []byte) {
	_, _ = c.w.WriteString("ms " + key + " " + size + " T0" + flags + "\r\n")
	_, _ = c.w.Write(value)
	_, _ = c.w.WriteString("\r\n")
}

// Has reads key's value with mg, discarding it, and reports whether
// memcached held it: a fill reads back values of a MiB on a thousand
// connections at once.
func (c *Client) Has(key string) (bool, error) {
	if err := c.deadline(); err != nil {
		return false, err
	}
	_, _ = c.w.WriteString("mg " + key + " v\r\n")
	if err := c.w.Flush(); err != nil {
		return false, err
	}
	l, err := c.line()
	if err != nil || l == "EN" {
		return false, err
	}
	fields := strings.Fields(l)
	if len(fields) < 2 || fields[0] != "VA" {
		return false, fmt.Errorf("memcache: mg %s: %q", key, l)
	}
	n, err := strconv.Atoi(fields[1])
	if err != nil {
		return false, fmt.Errorf("memcache: mg %s: %q", key, l)
	}
	_, err = io.CopyN(io.Discard, c.r, int64(n)+2)
	return err == nil, err
}
