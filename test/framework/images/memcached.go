package images

import (
	"bufio"
	"bytes"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// MemcachedUID is the memcache user and group of Debian's package and of the
// official memcached image.
const MemcachedUID = 11211

// memcachedBinary is where Debian's memcached package installs memcached.
const memcachedBinary = "/usr/bin/memcached"

// Memcached writes an image of Debian's memcached to dir, tagged ref: the
// binary (as /usr/local/bin/memcached, where the official image has it), the
// shared libraries ldd says it loads, and an /etc/passwd and /etc/group that
// name the memcache user. It runs as that user by default, with memcached as
// its entrypoint. `make node-packages` installs the package.
func Memcached(dir, ref string) (Image, error) {
	bin, err := hostExecutable(memcachedBinary, "/usr/local/bin/memcached")
	if err != nil {
		return Image{}, fmt.Errorf("%w (make node-packages installs Debian's memcached)", err)
	}
	entries := []entry{bin,
		{path: "/etc/passwd", mode: 0o644, data: []byte(fmt.Sprintf(
			"root:x:0:0:root:/root:/usr/sbin/nologin\nmemcache:x:%d:%d:memcached:/nonexistent:/usr/sbin/nologin\n", MemcachedUID, MemcachedUID))},
		{path: "/etc/group", mode: 0o644, data: []byte(fmt.Sprintf("root:x:0:\nmemcache:x:%d:\n", MemcachedUID))},
		{path: "/tmp", mode: 0o1777, dir: true},
	}
	libs, err := sharedLibraries(memcachedBinary)
	if err != nil {
		return Image{}, err
	}
	for _, lib := range libs {
		// The library's content, under the path the loader looks for,
		// whatever symlinks lead to it on this machine.
		real, err := filepath.EvalSymlinks(lib)
		if err != nil {
			return Image{}, err
		}
		e, err := hostExecutable(real, lib)
		if err != nil {
			return Image{}, err
		}
		entries = append(entries, e)
	}
	uid := fmt.Sprint(MemcachedUID)
	return write(filepath.Join(dir, "memcached.tar"), entries, v1.Config{
		User:         uid + ":" + uid,
		Entrypoint:   []string{"memcached"},
		Env:          []string{defaultPath},
		ExposedPorts: map[string]struct{}{"11211/tcp": {}},
		WorkingDir:   "/",
		// The tag it was built as: two tags of the same memcached are two
		// images, so a pod's status tells which one it runs.
		Labels: map[string]string{"org.opencontainers.image.ref.name": ref},
	}, ref)
}

// sharedLibraries is the absolute paths ldd lists for bin, the dynamic
// loader included.
func sharedLibraries(bin string) ([]string, error) {
	out, err := exec.Command("ldd", bin).Output()
	if err != nil {
		return nil, fmt.Errorf("ldd %s: %w", bin, err)
	}
	var libs []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		// "libevent-2.1.so.7 => /lib/x86_64-linux-gnu/libevent-2.1.so.7 (0x...)"
		// or "/lib64/ld-linux-x86-64.so.2 (0x...)"; linux-vdso has no file.
		for _, f := range strings.Fields(sc.Text()) {
			if strings.HasPrefix(f, "/") {
				libs = append(libs, f)
				break
			}
		}
	}
	if len(libs) == 0 {
		return nil, fmt.Errorf("ldd %s listed no libraries:\n%s", bin, out)
	}
	return libs, sc.Err()
}

// MemcachedTag is what the local cluster's real node calls the memcached
// image it imports for `make run` and `make local-cluster`; the operator
// deploys it when RELATED_IMAGE_MEMCACHED names it.
const MemcachedTag = "localhost/memcached:debian"
