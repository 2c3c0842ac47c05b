package operatorproc

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"
)

// loopbackClient never reuses a connection, so a restarted operator on the
// same port is never mistaken for the old one, and uses no proxy, since the
// operator's URLs are on loopback.
var loopbackClient = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 10 * time.Second}

// Get returns the body of a 200 answer from url on loopback (the operator's
// /metrics, say).
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
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return string(body), nil
}

// WaitHTTP polls url (the operator's /readyz, say) until it answers 200 OK.
// It fails early when the process exits, with the end of its log.
func (p *Process) WaitHTTP(ctx context.Context, url string) error {
	ticker := time.NewTicker(100 * time.Millisecond)
	defer ticker.Stop()
	var last error
	for {
		_, err := Get(ctx, url)
		if err == nil {
			return nil
		}
		if ctx.Err() == nil {
			last = err
		}
		select {
		case <-p.exited:
			return fmt.Errorf("the operator exited (%v) before %s answered\n%s", p.err, url, p.Tail(30))
		case <-ctx.Done():
			return fmt.Errorf("%w waiting for %s (last: %v)", ctx.Err(), url, last)
		case <-ticker.C:
		}
	}
}
