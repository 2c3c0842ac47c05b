package memcachedtls

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"time"
)

// ServedPath is where the health server tells which certificate memcached
// serves: the operator reads it to report a certificate near its end while
// the pod runs, which no restart or Secret change would reveal.
const ServedPath = "/certificate"

// maxServedBytes bounds the answer ReadServed reads: a Served is a few
// hundred bytes, and a pod's port may answer anything.
const maxServedBytes = 4 << 10

// Served is the certificate memcached serves: the one the sidecar last
// handed it.
type Served struct {
	SerialNumber string    `json:"serialNumber"`
	NotBefore    time.Time `json:"notBefore"`
	NotAfter     time.Time `json:"notAfter"`
}

func servedOf(leaf *x509.Certificate) *Served {
	return &Served{SerialNumber: leaf.SerialNumber.Text(16), NotBefore: leaf.NotBefore.UTC(), NotAfter: leaf.NotAfter.UTC()}
}

// servedHandler answers GET ServedPath with what served holds: 503 until
// the first refresh, as the sidecar knows nothing of what memcached loaded
// at its start before that.
func servedHandler(served *atomic.Pointer[Served]) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		s := served.Load()
		if s == nil {
			http.Error(w, "no certificate handed to memcached yet", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(s)
	}
}

// ReadServed asks the sidecar whose health server is at hostPort which
// certificate memcached serves.
func ReadServed(ctx context.Context, c *http.Client, hostPort string) (Served, error) {
	var s Served
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+hostPort+ServedPath, nil)
	if err != nil {
		return s, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return s, err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxServedBytes+1))
	if err != nil {
		return s, err
	}
	if len(body) > maxServedBytes {
		return s, fmt.Errorf("%s: an answer over %d bytes", ServedPath, maxServedBytes)
	}
	if resp.StatusCode != http.StatusOK {
		return s, fmt.Errorf("%s: %s: %s", ServedPath, resp.Status, strings.TrimSpace(string(body)))
	}
	if err := json.Unmarshal(body, &s); err != nil {
		return s, fmt.Errorf("%s: %w", ServedPath, err)
	}
	if s.NotAfter.IsZero() || s.NotBefore.IsZero() {
		return s, errors.New(ServedPath + ": no validity period in the answer")
	}
	return s, nil
}
