package images

import (
	"archive/tar"
	"bytes"
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	ggcrname "github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/moby/patternmatcher"
	"github.com/moby/patternmatcher/ignorefile"
	. "github.com/onsi/gomega"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/example-inc/memcached-operator/certs/certstest"
	"github.com/example-inc/memcached-operator/controllers"
	"github.com/example-inc/memcached-operator/hack/local-cluster/fipsbuild"
	"github.com/example-inc/memcached-operator/hack/local-cluster/gobuild"
	"github.com/example-inc/memcached-operator/hack/local-cluster/memcachedproc"
	"github.com/example-inc/memcached-operator/hack/local-cluster/process"
	"github.com/example-inc/memcached-operator/hack/repo"
)

// files reads back the single layer of an image archive: path -> header and
// content.
func files(t *testing.T, img Image) (v1.Config, map[string]*tar.Header, map[string][]byte) {
	t.Helper()
	g := NewWithT(t)
	i, err := tarball.ImageFromPath(img.Archive, nil)
	g.Expect(err).NotTo(HaveOccurred())
	cf, err := i.ConfigFile()
	g.Expect(err).NotTo(HaveOccurred())
	if cf.OS != "linux" || cf.Architecture == "" {
		t.Errorf("platform %s/%s: containerd imports only its own", cf.OS, cf.Architecture)
	}
	layers, err := i.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("%d layers, %v", len(layers), err)
	}
	rc, err := layers[0].Uncompressed()
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = rc.Close() }()
	headers, data := map[string]*tar.Header{}, map[string][]byte{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		g.Expect(err).NotTo(HaveOccurred())
		name := "/" + strings.TrimSuffix(h.Name, "/")
		if h.Uid != 0 || h.Gid != 0 {
			t.Errorf("%s is owned by %d:%d, want root", name, h.Uid, h.Gid)
		}
		headers[name] = h
		data[name], err = io.ReadAll(tr)
		g.Expect(err).NotTo(HaveOccurred())
	}
	return cf.Config, headers, data
}

// dockerfile is the repository's Dockerfile.
func dockerfile() string { return filepath.Join(repo.Root(), "Dockerfile") }

// writeDockerfile writes text as a Dockerfile of its own and returns its
// path.
func writeDockerfile(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "Dockerfile")
	NewWithT(t).Expect(os.WriteFile(path, []byte(text), 0o644)).To(Succeed())
	return path
}

func TestParseDockerfileRefusesWhatTheImageWouldMiss(t *testing.T) {
	for name, tt := range map[string]struct{ text, stage string }{
		"RUN in the final stage": {text: "FROM scratch\nCOPY a /a\nRUN true\n"},
		"ADD in the final stage": {text: "FROM scratch\nADD a /a\n"},
		"shell-form entrypoint":  {text: "FROM scratch\nENTRYPOINT /manager\n"},
		"no FROM":                {text: "USER 1\n"},
		"unterminated LABEL":     {text: "FROM scratch\nLABEL a=\"x b=y\n"},
		"RUN in the named stage": {text: "FROM scratch AS side\nRUN true\nFROM scratch\nUSER 1\n", stage: "side"},
		"no such stage":          {text: "FROM scratch AS other\nUSER 1\nFROM scratch\nUSER 1\n", stage: "side"},
		// Docker would leave these labels empty.
		"an undeclared argument":       {text: "FROM scratch\nLABEL version=\"${VERSION}\"\n"},
		"an argument without a value":  {text: "FROM scratch\nARG OTHER\nLABEL version=$OTHER\n"},
		"an argument of another stage": {text: "FROM scratch AS b\nARG VERSION=1\nFROM scratch\nLABEL version=$VERSION\n"},
		"a reference with a default":   {text: "FROM scratch\nARG OTHER\nLABEL version=\"${OTHER:-1}\"\n"},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := ParseDockerfileStage(writeDockerfile(t, tt.text), tt.stage, map[string]string{"VERSION": "1.2.3"}); err == nil {
				t.Error("parsed without an error")
			}
		})
	}
	// A RUN in a build stage is none of the image's business, nor is one
	// in the final stage when another stage is asked for. Arguments take
	// the build's value, else their default.
	path := writeDockerfile(t, "FROM golang AS builder\nRUN go build\nFROM scratch AS side\nARG VERSION\nARG DIR=/licenses\n"+
		"LABEL a=\"x y\" b=z version=\"${VERSION}\" v2=$VERSION\nCOPY --from=builder /w/m .\nCOPY LICENSE ${DIR}/LICENSE\n"+
		"FROM scratch\nRUN true\n")
	if _, err := ParseDockerfile(path, map[string]string{"VERSION": "1.2.3"}); err == nil {
		t.Error("ParseDockerfile took the final stage, which RUNs, without an error")
	}
	s, err := ParseDockerfileStage(path, "side", map[string]string{"VERSION": "1.2.3"})
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	wantCopies := []Copy{{From: "builder", Source: "/w/m", Dest: "."}, {Source: "LICENSE", Dest: "/licenses/LICENSE"}}
	if s.Name != "side" || !cmp.Equal(s.Labels, map[string]string{"a": "x y", "b": "z", "version": "1.2.3", "v2": "1.2.3"}) ||
		!cmp.Equal(s.Copies, wantCopies) {
		t.Errorf("stage = %+v", s)
	}
}

// The operator's and the TLS reloader's images are configured as their
// stages of the Dockerfile say, and what they run is static:
// distroless/static has no C library. The binaries themselves run in the
// images on the real node (test/e2e); here a small static binary stands
// in for them, built the same way. The stages themselves run their binary
// as the nonroot user from /, and open the ports config/manager and
// config/default open (the operator's) or that of /readyz, which the
// operator's Deployment probes (the sidecar's).
//
// The images built here read the build context straight from the
// repository; docker build sees only what .dockerignore lets through. Every
// file an image stage copies from the context must get through, or
// `make docker-build` fails where these images do not.
func TestImagesAgreeWithTheDockerfile(t *testing.T) {
	g := NewWithT(t)
	bin := filepath.Join(t.TempDir(), "stand-in")
	g.Expect(gobuild.Module(context.Background(), bin, "./hack/local-cluster/images/pause")).To(Succeed())
	f, err := os.Open(filepath.Join(repo.Root(), ".dockerignore"))
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = f.Close() }()
	patterns, err := ignorefile.ReadAll(f)
	g.Expect(err).NotTo(HaveOccurred())
	ignored, err := patternmatcher.New(patterns)
	g.Expect(err).NotTo(HaveOccurred())
	// A CSV names the operator's image by its release tag: the archive
	// holds both.
	const alias = "example.com/memcached-operator:v0.1.0"
	for _, tt := range []struct {
		name, stage string
		// versionVar is the Makefile variable make docker-build passes
		// as the stage's version.
		versionVar string
		build      func(dir string) (Image, error)
		aliases    []string
		entrypoint string
		ports      []string
		// labels must hold these values; "" asks for any value.
		labels map[string]string
	}{
		{name: "operator", versionVar: "VERSION", build: func(dir string) (Image, error) {
			return operatorImage(dir, bin, "localhost/memcached-operator:test", alias)
		}, aliases: []string{alias}, entrypoint: "/manager", ports: []string{"8081/tcp", "8443/tcp", "9443/tcp"},
			labels: map[string]string{"name": "memcached-operator", "io.openshift.tags": ""}},
		{name: "tls-reloader", stage: tlsReloaderStage, versionVar: "TLS_RELOADER_VERSION", build: func(dir string) (Image, error) {
			return tlsReloaderImage(dir, bin, TLSReloaderTag)
		}, entrypoint: "/tls-reloader", ports: []string{"11213/tcp"}, labels: map[string]string{"name": "memcached-tls-reloader"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			version, err := repo.MakeDefault(tt.versionVar)
			g.Expect(err).NotTo(HaveOccurred())
			stage, err := ParseDockerfileStage(dockerfile(), tt.stage, map[string]string{tt.versionVar: version})
			g.Expect(err).NotTo(HaveOccurred())
			if stage.User != "65532:65532" || !cmp.Equal(stage.Entrypoint, []string{tt.entrypoint}) || stage.WorkingDir != "/" {
				t.Errorf("user %q, entrypoint %v, workdir %q: want the nonroot user running %s from /", stage.User, stage.Entrypoint, stage.WorkingDir, tt.entrypoint)
			}
			if diff := cmp.Diff(tt.ports, stage.ExposedPorts); diff != "" {
				t.Errorf("exposed ports (-want +got):\n%s", diff)
			}
			for k, v := range tt.labels {
				if got := stage.Labels[k]; got == "" || v != "" && got != v {
					t.Errorf("labels = %v, want %s=%q", stage.Labels, k, v)
				}
			}
			fromContext := 0
			for _, c := range stage.Copies {
				if c.From != "" {
					continue
				}
				fromContext++
				if excluded, err := ignored.MatchesOrParentMatches(c.Source); err != nil || excluded {
					t.Errorf("the stage copies %s from the build context, which .dockerignore leaves out (%v)", c.Source, err)
				}
			}
			if fromContext == 0 {
				t.Error("the stage copies nothing from the build context: the .dockerignore check checked nothing")
			}

			img, err := tt.build(t.TempDir())
			g.Expect(err).NotTo(HaveOccurred())
			for _, a := range tt.aliases {
				tag, err := ggcrname.NewTag(a)
				g.Expect(err).NotTo(HaveOccurred())
				if _, err := tarball.ImageFromPath(img.Archive, &tag); err != nil {
					t.Errorf("%s not in the archive: %v", a, err)
				}
			}
			checkImageAgainstStage(t, img, stage)
			checkCertificationMetadata(t, img, version)
		})
	}
}

// requiredLabels are the labels openshift-preflight's HasRequiredLabel
// check (internal/policy/container/has_required_labels.go) wants on a
// certified image, each with a value.
var requiredLabels = []string{"name", "vendor", "version", "release", "summary", "description", "maintainer"}

// checkCertificationMetadata fails unless img carries what Red Hat's
// container certification reads: every required label with a value, the
// version make docker-build gives it, and the project's license under
// /licenses (preflight's HasLicense wants a non-empty file there).
func checkCertificationMetadata(t *testing.T, img Image, version string) {
	t.Helper()
	cfg, headers, data := files(t, img)
	for _, l := range requiredLabels {
		if strings.TrimSpace(cfg.Labels[l]) == "" {
			t.Errorf("label %s is missing or empty (labels %v)", l, cfg.Labels)
		}
	}
	if cfg.Labels["version"] != version {
		t.Errorf("label version %q, want the Makefile's %q", cfg.Labels["version"], version)
	}
	license, err := os.ReadFile(filepath.Join(repo.Root(), "LICENSE"))
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	if h := headers["/licenses/LICENSE"]; h == nil || h.Typeflag != tar.TypeReg || h.Mode&0o444 != 0o444 {
		t.Errorf("/licenses/LICENSE is not a file everyone may read: %+v", h)
	}
	if len(license) == 0 || !bytes.Equal(data["/licenses/LICENSE"], license) {
		t.Errorf("/licenses/LICENSE (%d bytes) is not the repository's LICENSE (%d bytes)", len(data["/licenses/LICENSE"]), len(license))
	}
}

// checkImageAgainstStage compares img with the Dockerfile stage it is
// built from.
func checkImageAgainstStage(t *testing.T, img Image, stage Stage) {
	t.Helper()
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
		t.Errorf("image config %+v disagrees with its stage of the Dockerfile %+v", cfg, stage)
	}
	checkStaticEntrypoint(t, stage.Entrypoint[0], headers, data)
	if !strings.Contains(string(data["/etc/passwd"]), ":65532:65532:") {
		t.Errorf("/etc/passwd lacks the nonroot user:\n%s", data["/etc/passwd"])
	}
}

// checkStaticEntrypoint fails unless the image holds entrypoint as an
// executable linked statically: the images have no C library.
func checkStaticEntrypoint(t *testing.T, entrypoint string, headers map[string]*tar.Header, data map[string][]byte) {
	t.Helper()
	if h := headers[entrypoint]; h == nil || h.Mode&0o111 == 0 {
		t.Fatalf("%s missing or not executable", entrypoint)
	}
	f, err := elf.NewFile(bytes.NewReader(data[entrypoint]))
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("%s is dynamically linked; it must be built with CGO_ENABLED=0", entrypoint)
		}
	}
}

// The exporter's image is upstream's memcached_exporter at the version
// hack/tools/memcached-exporter pins, static, run by a numeric user that is
// not root, as upstream's image runs it; and the binary in it serves
// memcached's stats: taken out of the image and pointed at a memcached on
// loopback (as the sidecar is in a pod), it answers memcached_up 1.
func TestMemcachedExporterImage(t *testing.T) {
	g, ctx, dir := NewWithT(t), t.Context(), t.TempDir()
	img, err := MemcachedExporter(ctx, dir, MemcachedExporterTag)
	g.Expect(err).NotTo(HaveOccurred())
	version, err := moduleVersion(ctx, filepath.Join(repo.Root(), exporterWrapper), exporterModule)
	g.Expect(err).NotTo(HaveOccurred())
	cfg, headers, data := files(t, img)
	if cfg.User != "65534:65534" || !cmp.Equal(cfg.Entrypoint, []string{"/bin/memcached_exporter"}) {
		t.Errorf("user %q, entrypoint %v: want nobody running /bin/memcached_exporter, as upstream's image", cfg.User, cfg.Entrypoint)
	}
	if _, ok := cfg.ExposedPorts["9150/tcp"]; !ok || len(cfg.ExposedPorts) != 1 {
		t.Errorf("exposed ports %v, want 9150/tcp", cfg.ExposedPorts)
	}
	if cfg.Labels["org.opencontainers.image.version"] != version {
		t.Errorf("labels %v: want the version %s pins, %s", cfg.Labels, exporterWrapper, version)
	}
	checkStaticEntrypoint(t, exporterBinary, headers, data)

	bin := filepath.Join(dir, "from-image")
	g.Expect(os.WriteFile(bin, data[exporterBinary], 0o755)).To(Succeed())
	// Against each supported release of memcached.
	memcachedproc.ForEachRelease(t, func(t *testing.T, rel memcachedproc.Release) { exporterServes(ctx, t, rel, bin, version) })
}

// exporterServes runs the exporter binary bin against rel's memcached and
// checks that it reports memcached up and its own version.
func exporterServes(ctx context.Context, t *testing.T, rel memcachedproc.Release, bin, version string) {
	g := NewWithT(t)
	srv := rel.Run(t, []string{"memcached"})
	ports, err := certstest.FreePorts(1)
	g.Expect(err).NotTo(HaveOccurred())
	listen := fmt.Sprintf("127.0.0.1:%d", ports[0])
	exporter, err := process.Start(process.Spec{Path: bin, LogPath: filepath.Join(t.TempDir(), "exporter.log"),
		Args: []string{"--memcached.address=" + srv.Addr, "--web.listen-address=" + listen}})
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = exporter.Stop(10 * time.Second) })
	url := "http://" + listen + "/metrics"
	if err := exporter.WaitFor(ctx, "serving "+url, process.HTTPOK(url)); err != nil {
		t.Fatalf("%v\n%s", err, exporter.Tail(20))
	}
	text, err := process.Get(ctx, url)
	g.Expect(err).NotTo(HaveOccurred())
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(text))
	g.Expect(err).NotTo(HaveOccurred())
	if up := families["memcached_up"].GetMetric(); len(up) != 1 || up[0].GetGauge().GetValue() != 1 {
		t.Errorf("memcached_up = %v, want 1\n%s", up, exporter.Tail(20))
	}
	info := families["memcached_exporter_build_info"].GetMetric()
	want := strings.TrimPrefix(version, "v")
	if !slices.ContainsFunc(info, func(m *dto.Metric) bool {
		return m.GetGauge().GetValue() == 1 && slices.ContainsFunc(m.GetLabel(), func(l *dto.LabelPair) bool {
			return l.GetName() == "version" && l.GetValue() == want
		})
	}) {
		t.Errorf("memcached_exporter_build_info carries no version %s: %v", want, info)
	}
}

// The TLS reloader's image, as the real node runs it, holds a binary built
// with the Go Cryptographic Module the Makefile names, in FIPS 140-3 mode by
// default. The operator's image is built by the same buildStatic; the
// manager itself is checked, and run under fips140=only, by
// the end-to-end suite's "the operator under GODEBUG=fips140=only" (building it static here too would add a
// whole compile of the manager's dependencies to this package).
func TestImageBinariesCarryTheFIPSModule(t *testing.T) {
	dir := t.TempDir()
	_, err := TLSReloader(t.Context(), dir, TLSReloaderTag)
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	if err := fipsbuild.Check(filepath.Join(dir, "tls-reloader")); err != nil {
		t.Error(err)
	}
}

// The Dockerfile builds what the tests build: each stage that runs go build
// passes GOFIPS140, declared in that stage, whose default is the
// Makefile's.
func TestDockerfileBuildsWithTheFIPSModule(t *testing.T) {
	raw, err := os.ReadFile(dockerfile())
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	text := continuation.ReplaceAllString(string(raw), " ")
	if want := "ARG GOFIPS140=" + repo.GoFIPS140(); !slices.Contains(strings.Split(text, "\n"), want) {
		t.Errorf("the Dockerfile lacks the line %q before its first FROM", want)
	}
	var stage string
	declared, builds := false, 0
	for line := range strings.Lines(text) {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "FROM "):
			stage, declared = line, false
		case line == "ARG GOFIPS140":
			declared = true
		case strings.HasPrefix(line, "RUN ") && strings.Contains(line, "go build"):
			builds++
			if !declared || !strings.Contains(line, "GOFIPS140=${GOFIPS140}") {
				t.Errorf("in %q, %q builds without GOFIPS140 (declared in the stage: %t)", stage, line, declared)
			}
		}
	}
	if builds != 2 {
		t.Errorf("%d go builds in the Dockerfile, want 2 (the manager and the TLS reloader)", builds)
	}
}

// TestMemcachedImageRunsItsRelease unpacks each release's image and runs
// its memcached from the image's files alone (in a chroot, as in a
// container: a library left out fails), and checks that the release the
// operator ships is the one of its default image.
func TestMemcachedImageRunsItsRelease(t *testing.T) {
	versions := map[string]string{}
	memcachedproc.ForEachRelease(t, func(t *testing.T, rel memcachedproc.Release) {
		g := NewWithT(t)
		img, err := MemcachedOf(rel, t.TempDir(), "localhost/memcached:"+rel.Name)
		g.Expect(err).NotTo(HaveOccurred())
		_, headers, data := files(t, img)
		root := t.TempDir()
		for name, h := range headers {
			dst := filepath.Join(root, name)
			switch h.Typeflag {
			case tar.TypeDir:
				err = os.MkdirAll(dst, 0o755)
			case tar.TypeSymlink:
				err = errors.Join(os.MkdirAll(filepath.Dir(dst), 0o755), os.Symlink(h.Linkname, dst))
			default:
				err = errors.Join(os.MkdirAll(filepath.Dir(dst), 0o755), os.WriteFile(dst, data[name], os.FileMode(h.Mode)))
			}
			g.Expect(err).NotTo(HaveOccurred())
		}
		cmd := exec.Command("/usr/local/bin/memcached", "--version")
		cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: root, Cloneflags: syscall.CLONE_NEWUSER,
			UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
			GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}}}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("memcached --version in the image's files: %v\n%s", err, out)
		}
		versions[rel.Name] = strings.TrimPrefix(strings.TrimSpace(string(out)), "memcached ")
	})
	if tag := ggcrname.MustParseReference(controllers.DefaultMemcachedImage).Identifier(); versions["shipped"] != tag {
		t.Errorf("the image built from the release shipped runs memcached %q; the default image %s is %q",
			versions["shipped"], controllers.DefaultMemcachedImage, tag)
	}
	if versions["oldest"] != memcachedproc.OldestVersion {
		t.Errorf("the host's memcached is %q; the docs support %s and later", versions["oldest"], memcachedproc.OldestVersion)
	}
	t.Logf("memcached releases: %v", versions)
}
