package images

import (
	"debug/elf"
	"fmt"
	"os/exec"
	"path"
	"path/filepath"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// BusyboxTag is what the local cluster's real node calls the client image
// it imports at start, for pods that look names up (nslookup) or talk to
// memcached (nc) from inside the cluster.
const BusyboxTag = "localhost/busybox:debian"

// busyboxBinary is where Debian's busybox-static package installs busybox.
const busyboxBinary = "/bin/busybox"

// nobody is the user the busybox image runs as, as the restricted Pod
// Security profile wants.
const nobody = 65534

// Busybox writes an image of Debian's static busybox to dir, tagged ref:
// /bin/busybox with a link for each of its applets where busybox puts them
// (sh, nslookup, nc, ...), an /etc/passwd and /etc/group naming nobody, who
// it runs as, and an nsswitch.conf that asks /etc/hosts first, then DNS, as
// Debian's does. Its libc is linked in, DNS included: the image needs no
// other file. `make node-packages` installs the package.
func Busybox(dir, ref string) (Image, error) {
	bin, err := hostExecutable(busyboxBinary, "/bin/busybox")
	if err != nil {
		return Image{}, fmt.Errorf("%w (make node-packages installs Debian's busybox-static)", err)
	}
	if err := checkStatic(busyboxBinary); err != nil {
		return Image{}, fmt.Errorf("%w: Debian's busybox package is dynamic, busybox-static replaces it", err)
	}
	out, err := exec.Command(busyboxBinary, "--list-full").Output()
	if err != nil {
		return Image{}, fmt.Errorf("%s --list-full: %w", busyboxBinary, err)
	}
	entries := []entry{bin,
		{path: "/etc/passwd", mode: 0o644, data: []byte(fmt.Sprintf("root:x:0:0:root:/root:/bin/sh\nnobody:x:%d:%d:nobody:/nonexistent:/bin/sh\n", nobody, nobody))},
		{path: "/etc/group", mode: 0o644, data: []byte(fmt.Sprintf("root:x:0:\nnogroup:x:%d:\n", nobody))},
		{path: "/etc/nsswitch.conf", mode: 0o644, data: []byte("hosts: files dns\n")},
		{path: "/tmp", mode: 0o1777, dir: true},
	}
	for _, applet := range strings.Fields(string(out)) {
		p := path.Join("/", applet)
		if p != bin.path {
			entries = append(entries, entry{path: p, mode: 0o777, link: bin.path})
		}
	}
	uid := fmt.Sprint(nobody)
	return write(filepath.Join(dir, "busybox.tar"), entries, v1.Config{
		User:       uid + ":" + uid,
		Cmd:        []string{"sh"},
		Env:        []string{defaultPath},
		WorkingDir: "/",
	}, ref)
}

// checkStatic fails unless the executable at p is statically linked: one
// with a program interpreter needs the dynamic loader and libraries too.
func checkStatic(p string) error {
	f, err := elf.Open(p)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	for _, prog := range f.Progs {
		if prog.Type == elf.PT_INTERP {
			return fmt.Errorf("%s is dynamically linked", p)
		}
	}
	return nil
}
