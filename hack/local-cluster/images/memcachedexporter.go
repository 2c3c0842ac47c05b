package images

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/example-inc/memcached-operator/hack/local-cluster/gobuild"
	"github.com/example-inc/memcached-operator/hack/repo"
)

// MemcachedExporterTag is what the tests and the local cluster's real node
// call the exporter's image; the operator deploys it when
// RELATED_IMAGE_MEMCACHED_EXPORTER names it. The tag carries no version:
// the exporter's version has one statement, hack/tools/memcached-exporter's
// go.mod, and the image's org.opencontainers.image.version label says it.
const MemcachedExporterTag = "localhost/memcached-exporter:test"

const (
	// exporterModule is prometheus/memcached_exporter, and
	// exporterPackage its main package.
	exporterModule  = "github.com/prometheus/memcached_exporter"
	exporterPackage = exporterModule + "/cmd/memcached_exporter"
	// exporterWrapper is the wrapper module that pins its version.
	exporterWrapper = "hack/tools/memcached-exporter"
	// exporterBinary and exporterUID are where the upstream image
	// (quay.io/prometheus/memcached-exporter) has the binary, and its user,
	// busybox's nobody, numeric so that the kubelet can tell it is not root.
	exporterBinary = "/bin/memcached_exporter"
	exporterUID    = 65534
	// ExporterPort is the exporter's default --web.listen-address port.
	ExporterPort = 9150
)

// MemcachedExporter writes the image of prometheus/memcached_exporter to dir,
// tagged ref: its main package built static, unchanged, at the version
// hack/tools/memcached-exporter requires, placed and configured as the
// upstream image has it (entrypoint /bin/memcached_exporter, user nobody,
// port 9150).
func MemcachedExporter(ctx context.Context, dir, ref string) (Image, error) {
	wrapper := filepath.Join(repo.Root(), exporterWrapper)
	version, err := moduleVersion(ctx, wrapper, exporterModule)
	if err != nil {
		return Image{}, err
	}
	bin := filepath.Join(dir, "memcached_exporter")
	// What `memcached_exporter --version` and the
	// memcached_exporter_build_info series report, as in upstream's build.
	ldflags := "-s -w -X github.com/prometheus/common/version.Version=" + strings.TrimPrefix(version, "v")
	if err := gobuild.Static(ctx, wrapper, bin, exporterPackage, ldflags); err != nil {
		return Image{}, err
	}
	return memcachedExporterImage(dir, bin, version, ref)
}

// memcachedExporterImage is MemcachedExporter's image around a built binary
// of the given version.
func memcachedExporterImage(dir, bin, version, ref string) (Image, error) {
	e, err := hostExecutable(bin, exporterBinary)
	if err != nil {
		return Image{}, err
	}
	uid := fmt.Sprint(exporterUID)
	return write(filepath.Join(dir, "memcached-exporter.tar"), []entry{e,
		{path: "/etc/passwd", mode: 0o644, data: []byte("root:x:0:0:root:/root:/sbin/nologin\nnobody:x:" + uid + ":" + uid + ":nobody:/home:/sbin/nologin\n")},
		{path: "/etc/group", mode: 0o644, data: []byte("root:x:0:\nnobody:x:" + uid + ":\n")},
	}, v1.Config{
		User:         uid + ":" + uid,
		Entrypoint:   []string{exporterBinary},
		Env:          []string{defaultPath},
		ExposedPorts: map[string]struct{}{fmt.Sprintf("%d/tcp", ExporterPort): {}},
		WorkingDir:   "/",
		Labels: map[string]string{
			"org.opencontainers.image.source":  "https://" + exporterModule,
			"org.opencontainers.image.version": version,
		},
	}, ref)
}

// moduleVersion is the version of module that the module in dir builds
// with.
func moduleVersion(ctx context.Context, dir, module string) (string, error) {
	cmd := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Version}}", module)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOTOOLCHAIN=local")
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go list -m %s in %s: %w", module, dir, err)
	}
	return strings.TrimSpace(string(out)), nil
}
