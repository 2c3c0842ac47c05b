package bundle

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/example-inc/memcached-operator/hack/repo"
	"github.com/example-inc/memcached-operator/test/framework/manifest"
)

// userWorkloadRefused are the scrape settings OpenShift's user-workload
// monitoring refuses in a ServiceMonitor or PodMonitor (its Prometheus
// Operator runs with arbitrary file system access denied): files on
// Prometheus's disk, which a tenant must not name. insecureSkipVerify is
// accepted there but verifies nothing, so it is refused here too.
var userWorkloadRefused = []string{"bearerTokenFile", "caFile", "certFile", "keyFile", "insecureSkipVerify"}

// monitorKinds are the Prometheus Operator's kinds that describe a scrape.
var monitorKinds = []string{"ServiceMonitor", "PodMonitor"}

// TestMonitorsNameNoFiles reads every YAML file under config/ and bundle/
// (bundle/ is made from config/): no ServiceMonitor or PodMonitor, and no
// JSON patch, which may target one, sets a setting user-workload monitoring
// refuses. config/prometheus's ServiceMonitor must be among those read.
func TestMonitorsNameNoFiles(t *testing.T) {
	var monitors int
	for _, dir := range []string{filepath.Join(repo.Root(), "config"), manifest.BundleDir} {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !slices.Contains([]string{".yaml", ".yml"}, filepath.Ext(path)) {
				return err
			}
			rel, _ := filepath.Rel(repo.Root(), path)
			for _, doc := range yamlDocuments(t, path) {
				switch v := doc.(type) {
				case map[string]any:
					if kind, _ := v["kind"].(string); slices.Contains(monitorKinds, kind) {
						monitors++
						for _, where := range refusedSettings(v, kind) {
							t.Errorf("%s: %s sets %s, which user-workload monitoring refuses", rel, kind, where)
						}
					}
				case []any: // a JSON patch: its paths and values
					for _, op := range v {
						op, _ := op.(map[string]any)
						p, _ := op["path"].(string)
						for _, seg := range strings.Split(p, "/") {
							if slices.Contains(userWorkloadRefused, seg) {
								t.Errorf("%s: a patch sets %s, which user-workload monitoring refuses", rel, p)
							}
						}
						for _, where := range refusedSettings(op["value"], p) {
							t.Errorf("%s: a patch sets %s, which user-workload monitoring refuses", rel, where)
						}
					}
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if monitors == 0 {
		t.Error("found no ServiceMonitor under config/: config/prometheus/monitor.yaml should be one")
	}
}

// refusedSettings lists where in v (found at path at) a key of
// userWorkloadRefused is set.
func refusedSettings(v any, at string) []string {
	var found []string
	switch v := v.(type) {
	case map[string]any:
		for k, child := range v {
			if slices.Contains(userWorkloadRefused, k) {
				found = append(found, at+"."+k)
			}
			found = append(found, refusedSettings(child, at+"."+k)...)
		}
	case []any:
		for _, child := range v {
			found = append(found, refusedSettings(child, at+"[]")...)
		}
	}
	return found
}

// yamlDocuments decodes every non-empty document of a YAML file, maps and
// lists alike (kustomize's JSON patches are lists).
func yamlDocuments(t *testing.T, path string) []any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var docs []any
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return docs
		}
		if err != nil {
			t.Fatalf("reading %s: %v", path, err)
		}
		var v any
		if err := yaml.Unmarshal(doc, &v); err != nil {
			t.Fatalf("decoding %s: %v", path, err)
		}
		if v != nil {
			docs = append(docs, v)
		}
	}
}
