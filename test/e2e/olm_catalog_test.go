package e2e

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/example-inc/memcached-operator/certs/certstest"
	"github.com/example-inc/memcached-operator/hack/local-cluster/process"
	"github.com/example-inc/memcached-operator/hack/repo"
)

// catalogSourceName is the suite's CatalogSource, in olmNamespace.
const catalogSourceName = "memcached-operator-catalog"

// renderCatalog writes the file-based catalog of bundleDirs (oldest first)
// into dir by running `make catalog`, the target that makes the published
// catalog, so the two cannot drift: opm render of each bundle directory
// (image fields empty, the manifests inside the catalog), an olm.package
// blob, and the channels fast and stable, in which each entry carries the
// replaces and olm.skipRange of its bundle's CSV; then opm validate.
func renderCatalog(ctx context.Context, opm, dir string, bundleDirs ...string) error {
	cmd := exec.CommandContext(ctx, "make", "--no-print-directory", "-C", repo.Root(), "catalog",
		"CATALOG_DIR="+dir, "CATALOG_BUNDLES="+strings.Join(bundleDirs, ","), "OPM="+opm)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("make catalog: %w\n%s", err, out)
	}
	return nil
}

// serveCatalog runs `opm serve` on dir at a free port. opm listens on every
// interface (it has no bind-address flag); the CatalogSource dials
// 127.0.0.1. Its profiling endpoint is off (it would take localhost:6060,
// which a second opm serve or another suite would collide on), and its
// termination log goes to the work directory instead of /dev.
func serveCatalog(opm, dir, workDir, name string) (*process.Process, int, error) {
	ports, err := certstest.FreePorts(1)
	if err != nil {
		return nil, 0, err
	}
	p, err := process.Start(process.Spec{
		Path:    opm,
		LogPath: filepath.Join(workDir, name+".log"),
		Args: []string{"serve", dir, "--port=" + strconv.Itoa(ports[0]), "--pprof-addr=",
			"--termination-log=" + filepath.Join(workDir, name+".termination.log")},
		Dir: workDir,
	})
	return p, ports[0], err
}

// catalogAddress is the gRPC address of a catalog served on port.
func catalogAddress(port int) string { return "127.0.0.1:" + strconv.Itoa(port) }

// catalogSource points OLM at a catalog served by address: a grpc source
// with an address needs no registry pod and no image.
func catalogSource(address string) *operatorsv1alpha1.CatalogSource {
	return &operatorsv1alpha1.CatalogSource{
		ObjectMeta: metav1.ObjectMeta{Name: catalogSourceName, Namespace: olmNamespace},
		Spec: operatorsv1alpha1.CatalogSourceSpec{
			SourceType:  operatorsv1alpha1.SourceTypeGrpc,
			Address:     address,
			DisplayName: "Memcached Operator (test)",
			Publisher:   "memcached-operator test/e2e",
		},
	}
}
