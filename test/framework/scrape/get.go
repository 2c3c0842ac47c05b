package scrape

import (
	"context"
	"io"
	"net/http"
)

// maxBody bounds what Get reads of an answer: the operator's /metrics is a
// few hundred kilobytes.
const maxBody = 4 << 20

// Get GETs url through c with token as bearer token ("" sends no
// Authorization header) and returns the status code and body, as a
// Prometheus scrape would see them.
func Get(ctx context.Context, c *http.Client, url, token string) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, "", err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	return resp.StatusCode, string(body), err
}
