package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// csvName is the CSV name operator-sdk gives a version of this package.
func csvName(version string) string { return "memcached-operator.v" + version }

// skipRange is the olm.skipRange make bundle gives a version: every older
// one upgrades straight to it.
func skipRange(version string) string { return ">=0.0.0 <" + version }

// nextBundle copies the bundle directory src to dst as version to, and
// returns the version it replaces. The copy is what
// `make bundle VERSION=<to> PREVIOUS_VERSION=<from> IMG=<operator image>:v<to>`
// writes; the suite cannot run make bundle itself, because it rewrites the
// committed bundle/, bundle.Dockerfile and config/manifests. The transform,
// and nothing else:
//   - the CSV's metadata.name memcached-operator.v<from> becomes
//     memcached-operator.v<to>, and spec.version <to>;
//   - the upgrade edges hack/bundle.sh writes: spec.replaces
//     memcached-operator.v<from>, and the olm.skipRange annotation
//     ">=0.0.0 <<to>" (make catalog copies both into the channel entries);
//   - the operator image's tag v<from> becomes v<to> wherever the CSV names
//     it (the containerImage annotation, the Deployment, relatedImages), so
//     the upgrade really changes the operator's pod template.
//
// The CRD, RBAC, Services and metadata/annotations.yaml are copied as they
// are.
func nextBundle(src, dst, to string) (from string, err error) {
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		return "", err
	}
	path, csv, err := readBundleCSV(dst)
	if err != nil {
		return "", err
	}
	from, err = csvVersion(csv)
	if err != nil {
		return "", err
	}
	oldImage, err := bundleImage(src)
	if err != nil {
		return "", err
	}
	if !strings.HasSuffix(oldImage, ":v"+from) {
		return "", fmt.Errorf("containerImage %q is not tagged v%s", oldImage, from)
	}
	newImage := strings.TrimSuffix(oldImage, from) + to

	csv.SetName(csvName(to))
	if err := unstructured.SetNestedField(csv.Object, to, "spec", "version"); err != nil {
		return "", err
	}
	if err := unstructured.SetNestedField(csv.Object, csvName(from), "spec", "replaces"); err != nil {
		return "", err
	}
	if err := unstructured.SetNestedField(csv.Object, skipRange(to), "metadata", "annotations", "olm.skipRange"); err != nil {
		return "", err
	}
	out, err := yaml.Marshal(csv.Object)
	if err != nil {
		return "", err
	}
	// containerImage, the Deployment's container and relatedImages.
	if n := strings.Count(string(out), oldImage); n < 3 {
		return "", fmt.Errorf("the CSV names %s %d times, want at least 3", oldImage, n)
	}
	out = []byte(strings.ReplaceAll(string(out), oldImage, newImage))
	return from, os.WriteFile(path, out, 0o644)
}

// readBundleCSV reads the one CSV of the bundle directory dir.
func readBundleCSV(dir string) (string, *unstructured.Unstructured, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "manifests", "*.clusterserviceversion.yaml"))
	if err != nil || len(paths) != 1 {
		return "", nil, fmt.Errorf("want one CSV in %s/manifests, found %v (%v)", dir, paths, err)
	}
	data, err := os.ReadFile(paths[0])
	if err != nil {
		return "", nil, err
	}
	csv := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(data, &csv.Object); err != nil {
		return "", nil, fmt.Errorf("%s: %w", paths[0], err)
	}
	return paths[0], csv, nil
}

// csvVersion is spec.version of a memcached-operator.v<version> CSV.
func csvVersion(csv *unstructured.Unstructured) (string, error) {
	v, _, _ := unstructured.NestedString(csv.Object, "spec", "version")
	if v == "" || csv.GetName() != csvName(v) {
		return "", fmt.Errorf("CSV %s has spec.version %q: not a memcached-operator.v<version> CSV", csv.GetName(), v)
	}
	return v, nil
}

// bundleVersion is the version of the bundle directory dir.
func bundleVersion(dir string) (string, error) {
	_, csv, err := readBundleCSV(dir)
	if err != nil {
		return "", err
	}
	return csvVersion(csv)
}

// bundleImage is the operator image the CSV of the bundle directory dir
// deploys (its containerImage annotation, which make bundle keeps equal to
// the Deployment's).
func bundleImage(dir string) (string, error) {
	_, csv, err := readBundleCSV(dir)
	if err != nil {
		return "", err
	}
	img := csv.GetAnnotations()["containerImage"]
	if img == "" {
		return "", fmt.Errorf("CSV %s has no containerImage annotation", csv.GetName())
	}
	return img, nil
}
