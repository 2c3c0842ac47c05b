package images

import (
	"archive/tar"
	"context"
	"debug/elf"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	ggcrname "github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/example-inc/memcached-operator/test/framework/repo"
)

// files reads back the single layer of an image archive: path -> header and
// content.
func files(t *testing.T, img Image) (v1.Config, map[string]*tar.Header, map[string][]byte) {
	t.Helper()
	i, err := tarball.ImageFromPath(img.Archive, nil)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := i.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cf.OS != "linux" || cf.Architecture == "" {
		t.Errorf("platform %s/%s: containerd imports only its own", cf.OS, cf.Architecture)
	}
	layers, err := i.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("%d layers, %v", len(layers), err)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = rc.Close() }()
	headers, data := map[string]*tar.Header{}, map[string][]byte{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		name := "/" + strings.TrimSuffix(h.Name, "/")
		if h.Uid != 0 || h.Gid != 0 {
			t.Errorf("%s is owned by %d:%d, want root", name, h.Uid, h.Gid)
		}
		headers[name] = h
		if data[name], err = io.ReadAll(tr); err != nil {
			t.Fatal(err)
		}
	}
	return cf.Config, headers, data
}

func TestDockerfileFinalStage(t *testing.T) {
	s, err := ParseDockerfile(filepath.Join(repo.Root(), "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	if s.User != "65532:65532" || !cmp.Equal(s.Entrypoint, []string{"/manager"}) || s.WorkingDir != "/" {
		t.Errorf("user %q, entrypoint %v, workdir %q: want the nonroot user running /manager from /", s.User, s.Entrypoint, s.WorkingDir)
	}
	// The ports config/manager and config/default open.
	if diff := cmp.Diff([]string{"8081/tcp", "8443/tcp", "9443/tcp"}, s.ExposedPorts); diff != "" {
		t.Errorf("exposed ports (-want +got):\n%s", diff)
	}
	if s.Labels["name"] != "memcached-operator" || s.Labels["io.openshift.tags"] == "" {
		t.Errorf("labels = %v", s.Labels)
	}
}

func TestParseDockerfileRefusesWhatTheImageWouldMiss(t *testing.T) {
	for name, text := range map[string]string{
		"RUN in the final stage": "FROM scratch\nCOPY a /a\nRUN true\n",
		"ADD in the final stage": "FROM scratch\nADD a /a\n",
		"shell-form entrypoint":  "FROM scratch\nENTRYPOINT /manager\n",
		"no FROM":                "USER 1\n",
		"unterminated LABEL":     "FROM scratch\nLABEL a=\"x b=y\n",
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "Dockerfile")
			if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := ParseDockerfile(path); err == nil {
				t.Error("parsed without an error")
			}
		})
	}
	// A RUN in a build stage is none of the image's business.
	path := filepath.Join(t.TempDir(), "Dockerfile")
	text := "FROM golang AS builder\nRUN go build\nFROM scratch\nLABEL a=\"x y\" b=z\nCOPY --from=builder /w/m .\n"
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := ParseDockerfile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !cmp.Equal(s.Labels, map[string]string{"a": "x y", "b": "z"}) || s.Copies[0] != [2]string{"/w/m", "."} {
		t.Errorf("stage = %+v", s)
	}
}

// The operator image is configured as the Dockerfile says, and what it runs
// is static: distroless/static has no C library. The manager itself runs in
// the image on the real node (test/node); here a small static binary stands
// in for it, built the same way.
func TestOperatorImageAgreesWithTheDockerfile(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "stand-in")
	if err := buildStatic(context.Background(), bin, "./test/framework/images/pause"); err != nil {
		t.Fatal(err)
	}
	const alias = "example.com/memcached-operator:v0.1.0"
	img, err := operatorImage(dir, bin, "localhost/memcached-operator:test", alias)
	if err != nil {
		t.Fatal(err)
	}
	// A CSV names the image by its release tag: the archive holds both.
	tag, err := ggcrname.NewTag(alias)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tarball.ImageFromPath(img.Archive, &tag); err != nil {
		t.Errorf("%s not in the archive: %v", alias, err)
	}
	stage, err := ParseDockerfile(filepath.Join(repo.Root(), "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, headers, data := files(t, img)
	var ports []string
	for p := range cfg.ExposedPorts {
		ports = append(ports, p)
	}
	slices.Sort(ports)
	if diff := cmp.Diff(stage.ExposedPorts, ports); diff != "" {
		t.Errorf("exposed ports (-Dockerfile +image):\n%s", diff)
	}
	if cfg.User != stage.User || !cmp.Equal(cfg.Entrypoint, stage.Entrypoint) || cfg.WorkingDir != stage.WorkingDir ||
		!cmp.Equal(cfg.Labels, stage.Labels) {
		t.Errorf("image config %+v disagrees with the Dockerfile's final stage %+v", cfg, stage)
	}
	manager := stage.Entrypoint[0]
	if h := headers[manager]; h == nil || h.Mode&0o111 == 0 {
		t.Fatalf("%s missing or not executable", manager)
	}
	f, err := elf.NewFile(strings.NewReader(string(data[manager])))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("%s is dynamically linked; the Dockerfile builds it with CGO_ENABLED=0", manager)
		}
	}
	if !strings.Contains(string(data["/etc/passwd"]), ":65532:65532:") {
		t.Errorf("/etc/passwd lacks the nonroot user:\n%s", data["/etc/passwd"])
	}
}
