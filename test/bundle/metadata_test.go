package bundle

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	scorecardv1alpha3 "github.com/operator-framework/api/pkg/apis/scorecard/v1alpha3"

	"github.com/example-inc/memcached-operator/hack/repo"
	"github.com/example-inc/memcached-operator/test/framework/manifest"
)

// The bundle metadata annotations this test reads.
const (
	annotationPackage       = "operators.operatorframework.io.bundle.package.v1"
	annotationChannels      = "operators.operatorframework.io.bundle.channels.v1"
	annotationDefault       = "operators.operatorframework.io.bundle.channel.default.v1"
	annotationManifests     = "operators.operatorframework.io.bundle.manifests.v1"
	annotationMetadata      = "operators.operatorframework.io.bundle.metadata.v1"
	annotationBuilder       = "operators.operatorframework.io.metrics.builder"
	annotationLayout        = "operators.operatorframework.io.metrics.project_layout"
	annotationTestMediaType = "operators.operatorframework.io.test.mediatype.v1"
	annotationTestConfig    = "operators.operatorframework.io.test.config.v1"
)

// bundleAnnotations reads bundle/metadata/annotations.yaml.
func bundleAnnotations(t *testing.T) map[string]string {
	t.Helper()
	var f struct {
		Annotations map[string]string `json:"annotations"`
	}
	readYAML(t, filepath.Join(manifest.BundleDir, "metadata", "annotations.yaml"), &f)
	if len(f.Annotations) == 0 {
		t.Fatal("bundle/metadata/annotations.yaml has no annotations")
	}
	return f.Annotations
}

// dockerfile is what this test reads of bundle.Dockerfile.
type dockerfile struct {
	labels map[string]string
	copies map[string]string // destination -> source
}

func readDockerfile(t *testing.T) dockerfile {
	t.Helper()
	f, err := os.Open(bundleDockerfile)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	d := dockerfile{labels: map[string]string{}, copies: map[string]string{}}
	s := bufio.NewScanner(f)
	for s.Scan() {
		fields := strings.Fields(s.Text())
		switch {
		case len(fields) == 2 && fields[0] == "LABEL":
			k, v, ok := strings.Cut(fields[1], "=")
			if !ok {
				t.Fatalf("bundle.Dockerfile: LABEL without a value: %q", s.Text())
			}
			d.labels[k] = v
		case len(fields) == 3 && fields[0] == "COPY":
			d.copies[fields[2]] = fields[1]
		}
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	return d
}

func TestDockerfileLabelsAreBundleAnnotations(t *testing.T) {
	if diff := cmp.Diff(bundleAnnotations(t), readDockerfile(t).labels); diff != "" {
		t.Errorf("bundle.Dockerfile labels differ from bundle/metadata/annotations.yaml (-annotations +labels):\n%s", diff)
	}
}

// The image's layout is what the annotations say: manifests, metadata and
// scorecard tests each copied from bundle/ to the path its annotation names.
func TestDockerfileCopiesWhatAnnotationsName(t *testing.T) {
	a := bundleAnnotations(t)
	copies := readDockerfile(t).copies
	for _, key := range []string{annotationManifests, annotationMetadata, annotationTestConfig} {
		dir := a[key]
		if dir == "" {
			t.Errorf("annotation %s is missing", key)
			continue
		}
		dest := "/" + dir
		want := "bundle/" + strings.TrimSuffix(dir, "/")
		if got := copies[dest]; got != want {
			t.Errorf("bundle.Dockerfile copies %q to %s, want %q (annotation %s)", got, dest, want, key)
		}
		if fi, err := os.Stat(filepath.Join(manifest.BundleDir, dir)); err != nil || !fi.IsDir() {
			t.Errorf("annotation %s names %s, which is not a directory of bundle/", key, dir)
		}
	}
	if len(copies) != 3 {
		t.Errorf("bundle.Dockerfile copies %v, want exactly the three directories above", copies)
	}
}

func TestAnnotationsDescribeThisBundle(t *testing.T) {
	a := bundleAnnotations(t)
	b := loadBundle(t)
	if a[annotationPackage] != packageName {
		t.Errorf("package annotation is %q, want %q", a[annotationPackage], packageName)
	}
	if !strings.HasPrefix(b.CSV.Name, packageName+".v") {
		t.Errorf("CSV %q is not named %s.v<version>", b.CSV.Name, packageName)
	}
	channels := strings.Split(a[annotationChannels], ",")
	if a[annotationChannels] == "" {
		t.Error("the bundle names no channel")
	}
	if def, ok := a[annotationDefault]; ok && !slices.Contains(channels, def) {
		t.Errorf("default channel %q is not one of the channels %q", def, channels)
	}
	// The builder and layout labels are the operator-sdk release and the
	// PROJECT layout the bundle was made with.
	var project map[string]any
	readYAML(t, filepath.Join(repo.Root(), "PROJECT"), &project)
	if layout, _ := project["layout"].([]any); len(layout) == 0 || a[annotationLayout] != layout[0] {
		t.Errorf("layout annotation %q, PROJECT layout %q", a[annotationLayout], project["layout"])
	}
	if got := b.CSV.Annotations["operators.operatorframework.io/builder"]; got != a[annotationBuilder] {
		t.Errorf("CSV builder annotation %q, bundle metadata %q", got, a[annotationBuilder])
	}
	if got := b.CSV.Annotations["operators.operatorframework.io/project_layout"]; got != a[annotationLayout] {
		t.Errorf("CSV layout annotation %q, bundle metadata %q", got, a[annotationLayout])
	}
}

var builderVersion = regexp.MustCompile(`^operator-sdk-(v\d+\.\d+\.\d+)$`)

// The scorecard configuration is where the test annotations say, and its
// test images come from the operator-sdk release that made the bundle.
func TestScorecardConfigMatchesAnnotations(t *testing.T) {
	a := bundleAnnotations(t)
	if a[annotationTestMediaType] != "scorecard+v1" {
		t.Errorf("test media type is %q, want scorecard+v1", a[annotationTestMediaType])
	}
	var cfg scorecardv1alpha3.Configuration
	readYAML(t, filepath.Join(manifest.BundleDir, a[annotationTestConfig], "config.yaml"), &cfg)
	if cfg.Kind != scorecardv1alpha3.ConfigurationKind || cfg.APIVersion != scorecardv1alpha3.GroupVersion.String() {
		t.Errorf("scorecard config is %s %s, want %s %s", cfg.APIVersion, cfg.Kind,
			scorecardv1alpha3.GroupVersion, scorecardv1alpha3.ConfigurationKind)
	}
	m := builderVersion.FindStringSubmatch(a[annotationBuilder])
	if m == nil {
		t.Fatalf("builder annotation %q is not operator-sdk-vX.Y.Z", a[annotationBuilder])
	}
	wantImage := "quay.io/operator-framework/scorecard-test:" + m[1]
	var n int
	for _, stage := range cfg.Stages {
		for _, test := range stage.Tests {
			n++
			if test.Image != wantImage {
				t.Errorf("scorecard test %v runs %s, want %s (the bundle's builder)", test.Labels, test.Image, wantImage)
			}
		}
	}
	if n == 0 {
		t.Error("the scorecard configuration holds no test")
	}
}
