package images

import (
	"debug/elf"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/example-inc/memcached-operator/hack/local-cluster/memcachedproc"
)

// MemcachedUID is the memcache user and group of Debian's package and of the
// official memcached image.
const MemcachedUID = 11211

// Memcached writes an image of the memcached release the operator ships
// (Debian trixie's, which make memcached unpacks) to dir, tagged ref.
func Memcached(dir, ref string) (Image, error) {
	return MemcachedOf(memcachedproc.Shipped(), dir, ref)
}

// MemcachedOf writes an image of rel's memcached to dir, tagged ref: the
// binary (as /usr/local/bin/memcached, where the official image has it),
// the shared libraries it loads, found in rel's root as its dynamic loader
// would, and an /etc/passwd and /etc/group that name the memcache user. It
// runs as that user by default, with memcached as its entrypoint.
func MemcachedOf(rel memcachedproc.Release, dir, ref string) (Image, error) {
	bin, err := hostExecutable(rel.Binary(), "/usr/local/bin/memcached")
	if err != nil {
		return Image{}, fmt.Errorf("%w (make memcached unpacks and installs memcached)", err)
	}
	entries := []entry{bin,
		{path: "/etc/passwd", mode: 0o644, data: []byte(fmt.Sprintf(
			"root:x:0:0:root:/root:/usr/sbin/nologin\nmemcache:x:%d:%d:memcached:/nonexistent:/usr/sbin/nologin\n", MemcachedUID, MemcachedUID))},
		{path: "/etc/group", mode: 0o644, data: []byte(fmt.Sprintf("root:x:0:\nmemcache:x:%d:\n", MemcachedUID))},
		{path: "/tmp", mode: 0o1777, dir: true},
	}
	libs, err := sharedLibraries(rel.Root, rel.Binary())
	if err != nil {
		return Image{}, err
	}
	uid := fmt.Sprint(MemcachedUID)
	return write(filepath.Join(dir, "memcached.tar"), append(entries, libs...), v1.Config{
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

// libraryDirs are where Debian's loader looks for a library with no cache
// (an image has none), relative to the root.
var libraryDirs = []string{"lib/x86_64-linux-gnu", "usr/lib/x86_64-linux-gnu", "lib", "usr/lib"}

// sharedLibraries are the shared libraries bin needs, theirs in turn and
// the dynamic loader, read from root (which may hold another Debian release
// than the host's, so the host's ldd cannot be asked), each at the path its
// loader finds it in the image.
func sharedLibraries(root, bin string) ([]entry, error) {
	f, err := elf.Open(bin)
	if err != nil {
		return nil, err
	}
	interp, err := interpreter(f)
	_ = f.Close()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", bin, err)
	}
	loader, err := findLibrary(root, path.Base(interp))
	if err != nil {
		return nil, err
	}
	loaderEntry, err := hostExecutable(filepath.Join(root, loader), interp)
	if err != nil {
		return nil, err
	}
	entries := []entry{loaderEntry}
	seen := map[string]bool{path.Base(interp): true}
	queue := []string{bin}
	for len(queue) > 0 {
		file := queue[0]
		queue = queue[1:]
		needed, err := neededLibraries(file)
		if err != nil {
			return nil, err
		}
		for _, name := range needed {
			if seen[name] {
				continue
			}
			seen[name] = true
			rel, err := findLibrary(root, name)
			if err != nil {
				return nil, fmt.Errorf("%s needs %s: %w", file, name, err)
			}
			e, err := hostExecutable(filepath.Join(root, rel), "/"+rel)
			if err != nil {
				return nil, err
			}
			entries = append(entries, e)
			queue = append(queue, filepath.Join(root, rel))
		}
	}
	return entries, nil
}

// interpreter is the dynamic loader an executable names.
func interpreter(f *elf.File) (string, error) {
	for _, p := range f.Progs {
		if p.Type != elf.PT_INTERP {
			continue
		}
		data := make([]byte, p.Filesz)
		if _, err := p.ReadAt(data, 0); err != nil {
			return "", err
		}
		if n := len(data); n > 0 && data[n-1] == 0 {
			data = data[:n-1]
		}
		return string(data), nil
	}
	return "", errors.New("no dynamic loader named: not a dynamic executable")
}

// neededLibraries are the DT_NEEDED entries of the ELF file at name.
func neededLibraries(name string) ([]string, error) {
	f, err := elf.Open(name)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	return f.ImportedLibraries()
}

// findLibrary is the path, relative to root, of the library name in the
// first of libraryDirs that holds it.
func findLibrary(root, name string) (string, error) {
	for _, dir := range libraryDirs {
		rel := path.Join(dir, name)
		if _, err := os.Stat(filepath.Join(root, rel)); err == nil {
			return rel, nil
		} else if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
	}
	return "", fmt.Errorf("no %s in %s under %s", name, libraryDirs, root)
}

// MemcachedTag is what the local cluster's real node calls the memcached
// image it imports for `make run` and `make local-cluster`; the operator
// deploys it when RELATED_IMAGE_MEMCACHED names it.
const MemcachedTag = "localhost/memcached:debian"
