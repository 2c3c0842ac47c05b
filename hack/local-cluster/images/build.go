package images

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// Image is an image written to a docker-archive.
type Image struct {
	// Ref is the name the image is tagged with, as a pod's image field
	// names it.
	Ref string
	// Archive is the docker-archive file.
	Archive string
}

// entry is one file, directory or symlink of an image's single layer.
type entry struct {
	// path inside the image, absolute.
	path string
	mode int64
	// dir marks a directory; link a symlink to it; otherwise data is the
	// file's content.
	dir  bool
	link string
	data []byte
}

// epoch is every entry's modification time, so that an image built twice
// from the same files is the same image.
var epoch = time.Unix(0, 0).UTC()

// layer is a tar of the entries, parents first.
func layer(entries []entry) (v1.Layer, error) {
	sort.Slice(entries, func(i, j int) bool { return entries[i].path < entries[j].path })
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	seen := map[string]bool{}
	var addDirs func(dir string) error
	addDirs = func(dir string) error {
		if dir == "/" || seen[dir] {
			return nil
		}
		if err := addDirs(path.Dir(dir)); err != nil {
			return err
		}
		seen[dir] = true
		return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: dir[1:] + "/", Mode: 0o755, ModTime: epoch})
	}
	for _, e := range entries {
		if !path.IsAbs(e.path) {
			return nil, fmt.Errorf("image path %q is not absolute", e.path)
		}
		if err := addDirs(path.Dir(e.path)); err != nil {
			return nil, err
		}
		h := &tar.Header{Name: e.path[1:], Mode: e.mode, ModTime: epoch}
		switch {
		case e.dir:
			if seen[e.path] {
				continue
			}
			seen[e.path] = true
			h.Typeflag, h.Name = tar.TypeDir, h.Name+"/"
		case e.link != "":
			h.Typeflag, h.Linkname = tar.TypeSymlink, e.link
		default:
			h.Typeflag, h.Size = tar.TypeReg, int64(len(e.data))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if h.Typeflag == tar.TypeReg {
			if _, err := tw.Write(e.data); err != nil {
				return nil, err
			}
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	})
}

// write builds an image of one layer with config cfg and writes it, tagged
// ref and each of aliases, to archive.
func write(archive string, entries []entry, cfg v1.Config, ref string, aliases ...string) (Image, error) {
	tags := map[name.Reference]v1.Image{}
	for _, r := range append([]string{ref}, aliases...) {
		tag, err := name.NewTag(r)
		if err != nil {
			return Image{}, err
		}
		tags[tag] = nil
	}
	l, err := layer(entries)
	if err != nil {
		return Image{}, err
	}
	img, err := mutate.AppendLayers(empty.Image, l)
	if err != nil {
		return Image{}, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return Image{}, err
	}
	cf = cf.DeepCopy()
	// containerd imports only images for its own platform.
	cf.OS, cf.Architecture = "linux", runtime.GOARCH
	cf.Config = cfg
	cf.Created = v1.Time{Time: epoch}
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		return Image{}, err
	}
	if err := os.MkdirAll(filepath.Dir(archive), 0o755); err != nil {
		return Image{}, err
	}
	for tag := range tags {
		tags[tag] = img
	}
	if err := tarball.MultiRefWriteToFile(archive, tags); err != nil {
		return Image{}, fmt.Errorf("writing %s: %w", archive, err)
	}
	return Image{Ref: ref, Archive: archive}, nil
}

// hostExecutable is an entry holding the content of an executable (or a
// shared library) of this machine, mode 0755.
func hostExecutable(src, dst string) (entry, error) {
	data, err := os.ReadFile(src)
	if err != nil {
		return entry{}, err
	}
	return entry{path: dst, mode: 0o755, data: data}, nil
}

// defaultPath is PATH in every image, as in Debian's and distroless's.
const defaultPath = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
