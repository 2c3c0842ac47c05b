package e2e

import (
	"fmt"
	"os"
	"path/filepath"
)

// tools are the binaries and manifests the OLM specs need besides the
// control plane, as `make test-e2e` passes them.
type tools struct {
	// olm and catalog are OLM's two operators (OLM_BIN_DIR).
	olm, catalog string
	// olmCRDs is OLM's deploy/chart/crds (OLM_CRDS_DIR).
	olmCRDs string
	// proxyCRD is config.openshift.io's Proxy CRD (OPENSHIFT_PROXY_CRD).
	proxyCRD string
	// opm renders (through make catalog) and serves the catalog (OPM).
	opm string
}

// toolsFromEnv reads the paths and reports every one that is missing, so
// that a machine without them fails with one clear message.
func toolsFromEnv() (tools, []string) {
	t := tools{
		olm:      filepath.Join(os.Getenv("OLM_BIN_DIR"), "olm"),
		catalog:  filepath.Join(os.Getenv("OLM_BIN_DIR"), "catalog"),
		olmCRDs:  os.Getenv("OLM_CRDS_DIR"),
		proxyCRD: os.Getenv("OPENSHIFT_PROXY_CRD"),
		opm:      os.Getenv("OPM"),
	}
	var missing []string
	for name, path := range map[string]string{
		"OLM_BIN_DIR/olm": t.olm, "OLM_BIN_DIR/catalog": t.catalog, "OLM_CRDS_DIR": t.olmCRDs,
		"OPENSHIFT_PROXY_CRD": t.proxyCRD, "OPM": t.opm,
	} {
		if _, err := os.Stat(path); path == "" || err != nil {
			missing = append(missing, fmt.Sprintf("%s (%q)", name, path))
		}
	}
	return t, missing
}
