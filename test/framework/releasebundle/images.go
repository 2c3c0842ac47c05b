package releasebundle

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	"golang.org/x/sync/errgroup"

	"github.com/example-inc/memcached-operator/hack/local-cluster/images"
)

// builders build the image of each relatedImages entry of the bundle, by
// its name, from this tree and this machine (package images): what a
// release would publish under that name.
var builders = map[string]func(ctx context.Context, dir, ref string) (images.Image, error){
	"memcached-operator": func(ctx context.Context, dir, ref string) (images.Image, error) {
		return images.Operator(ctx, dir, ref)
	},
	"memcached": func(_ context.Context, dir, ref string) (images.Image, error) {
		return images.Memcached(dir, ref)
	},
	"tls-reloader":       images.TLSReloader,
	"memcached-exporter": images.MemcachedExporter,
}

// Images builds, under dir, an image for each of related (a bundle's
// relatedImages, by tag), tagged as it names it. It returns them by
// reference. A name it cannot build is an error: a new image in the
// bundle needs a builder here before a release can be proven.
func Images(ctx context.Context, dir string, related []v1alpha1.RelatedImage) (map[string]images.Image, error) {
	out := make([]images.Image, len(related))
	var g errgroup.Group
	for i, r := range related {
		build, ok := builders[r.Name]
		if !ok {
			return nil, fmt.Errorf("relatedImages %q (%s): releasebundle has no builder for it", r.Name, r.Image)
		}
		g.Go(func() (err error) {
			out[i], err = build(ctx, filepath.Join(dir, r.Name), r.Image)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	byRef := map[string]images.Image{}
	for i, r := range related {
		byRef[r.Image] = out[i]
	}
	return byRef, nil
}
