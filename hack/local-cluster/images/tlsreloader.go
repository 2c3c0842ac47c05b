package images

import (
	"context"
	"path/filepath"

	"github.com/example-inc/memcached-operator/hack/local-cluster/gobuild"
)

// TLSReloaderTag is what the tests and the local cluster's real node call
// the TLS reloader's image; the operator deploys it when
// RELATED_IMAGE_TLS_RELOADER names it.
const TLSReloaderTag = "localhost/memcached-tls-reloader:test"

// tlsReloaderStage is the Dockerfile's stage of the sidecar.
const tlsReloaderStage = "tls-reloader"

// TLSReloader writes the image of the sidecar of memcached pods that serve
// TLS to dir, tagged ref: cmd/tls-reloader built static and the license,
// placed, configured and labelled as the Dockerfile's tls-reloader stage
// says for TLS_RELOADER_VERSION.
func TLSReloader(ctx context.Context, dir, ref string) (Image, error) {
	bin := filepath.Join(dir, "tls-reloader")
	if err := gobuild.Module(ctx, bin, "./cmd/tls-reloader"); err != nil {
		return Image{}, err
	}
	return tlsReloaderImage(dir, bin, ref)
}

// tlsReloaderImage is TLSReloader's image around a built binary.
func tlsReloaderImage(dir, bin, ref string) (Image, error) {
	return dockerfileImage(tlsReloaderStage, []string{"TLS_RELOADER_VERSION"}, "tls-reloader", bin, filepath.Join(dir, "tls-reloader.tar"), ref)
}
