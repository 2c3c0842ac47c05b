package memcachedproc

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/example-inc/memcached-operator/hack/repo"
)

// Release is a memcached release unpacked into a root filesystem on this
// host: the one the operator ships (Debian trixie's, in repo.MemcachedRoot)
// or the host's own package, the oldest release supported.
type Release struct {
	// Name says which, in test names and messages.
	Name string
	// Root is the root filesystem: "/" is the host's.
	Root string
}

// libDir is where Debian's packages put shared libraries and the loader.
const libDir = "usr/lib/x86_64-linux-gnu"

// Shipped is the release the operator's default image runs (make memcached
// unpacks it).
func Shipped() Release { return Release{Name: "shipped", Root: repo.MemcachedRoot()} }

// OldestVersion is the oldest memcached release supported, the version of
// Debian 12's package, which the docs name.
const OldestVersion = "1.6.18"

// Oldest is the oldest release supported: the host's Debian memcached
// (make memcached installs it).
func Oldest() Release { return Release{Name: "oldest", Root: "/"} }

// ForEachRelease runs test as a subtest on each: the proofs that must hold
// on every supported release.
func ForEachRelease(t *testing.T, test func(*testing.T, Release)) {
	t.Helper()
	for _, rel := range []Release{Shipped(), Oldest()} {
		t.Run(rel.Name, func(t *testing.T) { test(t, rel) })
	}
}

// Binary is the memcached executable inside the root.
func (r Release) Binary() string { return filepath.Join(r.Root, "usr", "bin", "memcached") }

// Command is the program and arguments that run this release's memcached
// with args. A root other than the host's runs through its own dynamic
// loader and libraries, as its libc is not the host's.
func (r Release) Command(args ...string) (string, []string, error) {
	if _, err := os.Stat(r.Binary()); err != nil {
		return "", nil, fmt.Errorf("memcachedproc: the %s memcached: %w (make memcached unpacks and installs it)", r.Name, err)
	}
	if r.Root == "/" {
		return r.Binary(), args, nil
	}
	lib := filepath.Join(r.Root, libDir)
	return filepath.Join(lib, "ld-linux-x86-64.so.2"), append([]string{"--library-path", lib, r.Binary()}, args...), nil
}
