package process

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// loopbackClient never reuses a connection, so a restarted server on the
// same port is never mistaken for the old one, and uses no proxy: every URL
// the framework polls is on this machine. It asks for no compression, which
// on loopback saves nothing and costs the server, often the operator a
// benchmark measures, a compression of every answer.
var loopbackClient = &http.Client{Transport: &http.Transport{DisableKeepAlives: true, DisableCompression: true}, Timeout: 10 * time.Second}

// Get returns the body of a 200 answer from a plain-HTTP url on this machine
// (an operator's /metrics, say).
func Get(ctx context.Context, url string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	resp, err := loopbackClient.Do(req)
	if err != nil {
		return "", err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET %s: %s: %s", url, resp.Status, strings.TrimSpace(string(body[:min(len(body), 512)])))
	}
	return string(body), nil
}

// HTTPOK is a check for WaitFor that passes on a 200 from url.
func HTTPOK(url string) func(context.Context) error {
	return func(ctx context.Context) error {
		_, err := Get(ctx, url)
		return err
	}
}
