package servedcert

import (
	"time"

	"github.com/example-inc/memcached-operator/certs/memcachedtls"
)

// Near reports whether s is near or past its end at now: less than a
// quarter of its lifetime left.
func Near(s memcachedtls.Served, now time.Time) bool {
	lifetime := s.NotAfter.Sub(s.NotBefore)
	return s.NotAfter.Sub(now) < lifetime/4
}

// Expiring is a pod that serves a certificate near or past its end.
type Expiring struct {
	Pod      string
	NotAfter time.Time
	// Expired: past its end when the pod was asked.
	Expired bool
}

// Report is what one round found of a Memcached's pods.
type Report struct {
	// Answered counts the pods that said what they serve; pods that did
	// not answer (starting, unreachable) count in neither list.
	Answered int
	// Expiring are the pods whose certificate is near or past its end,
	// soonest end first.
	Expiring []Expiring
}
