package images

import (
	"context"
	"path/filepath"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/example-inc/memcached-operator/hack/local-cluster/gobuild"
)

// Pause writes the pod sandbox image to dir, tagged ref: ./pause built
// static, as /pause, run as nobody (65535), as registry.k8s.io/pause is.
func Pause(ctx context.Context, dir, ref string) (Image, error) {
	bin := filepath.Join(dir, "pause")
	if err := gobuild.Module(ctx, bin, "./hack/local-cluster/images/pause"); err != nil {
		return Image{}, err
	}
	e, err := hostExecutable(bin, "/pause")
	if err != nil {
		return Image{}, err
	}
	return write(filepath.Join(dir, "pause.tar"), []entry{e}, v1.Config{
		User:       "65535:65535",
		Entrypoint: []string{"/pause"},
		WorkingDir: "/",
	}, ref)
}
