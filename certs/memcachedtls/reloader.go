package memcachedtls

import (
	"context"
	"crypto/sha256"
	"log/slog"
	"sync/atomic"
	"time"
)

// reloader hands memcached the Secret's files each time their content
// changes. It runs in one goroutine.
type reloader struct {
	secret    Secret
	memcached string
	interval  time.Duration
	log       *slog.Logger
	now       func() time.Time
	// served is what memcached serves since the last refresh, for the
	// health server.
	served *atomic.Pointer[Served]

	// accepted is the hash of the content memcached last loaded; zero
	// until the first refresh, so that the first one after a start is
	// sent even when the files have not changed since memcached read them.
	accepted [sha256.Size]byte
	// failed and failedSum are the last failure logged and the content it
	// was about, so that a failure that repeats at every tick is logged
	// once.
	failed    string
	failedSum [sha256.Size]byte
}

// run syncs at once and then every interval until ctx ends.
func (r *reloader) run(ctx context.Context) {
	ticker := time.NewTicker(r.interval)
	defer ticker.Stop()
	for {
		r.sync(ctx)
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}

// sync sends refresh_certs when the files differ from what memcached last
// accepted and pass the check. Whatever fails is tried again at the next
// tick: memcached reads the certificate and the key one after the other,
// so a refresh that races kubelet's swap of the volume can fail, leaving
// memcached with a certificate and a key that do not match, which fails
// every new handshake until the next tick's refresh loads a matching pair
// (one interval at most; the window is the microseconds between memcached's
// two reads). Files that change
// between this reading and memcached's are caught the same way: the next
// reading differs from what was accepted, and memcached loads them again.
func (r *reloader) sync(ctx context.Context) {
	f := r.secret.read()
	sum := f.hash()
	if sum == r.accepted {
		return
	}
	leaf, err := f.check(r.now())
	if err == nil {
		err = refreshCerts(ctx, r.memcached)
	}
	if err != nil {
		if ctx.Err() == nil && (err.Error() != r.failed || sum != r.failedSum) {
			r.failed, r.failedSum = err.Error(), sum
			r.log.Error(r.failed)
		}
		return
	}
	r.accepted, r.failed = sum, ""
	r.served.Store(servedOf(leaf))
	r.log.Info("memcached serves the certificate of Secret "+r.secret.Name,
		"serial", leaf.SerialNumber.Text(16), "notAfter", leaf.NotAfter.UTC().Format(time.RFC3339))
}
