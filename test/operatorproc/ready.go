package operatorproc

import (
	"context"
	"fmt"
	"net/http"
	"time"
)

// WaitHTTP polls url (the operator's /readyz, say) until it answers 200 OK.
// It fails early when the process exits, with the end of its log.
func (p *Process) WaitHTTP(ctx context.Context, url string) error {
	// No keep-alive, so a restarted operator on the same port is never
	// mistaken for the old one; no proxy, since the URL is on loopback.
	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 5 * time.Second}
	ticker := time.NewTicker(100 * time.Millisecond)
	defer ticker.Stop()
	var last error
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := c.Do(req)
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("GET %s: %s", url, resp.Status)
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
