package disconnected

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	"sigs.k8s.io/yaml"

	"github.com/example-inc/memcached-operator/hack/repo"
	"github.com/example-inc/memcached-operator/test/framework/registrymirror"
	"github.com/example-inc/memcached-operator/test/framework/releasebundle"
)

// devBundleDir is the committed bundle, whose images are named by tag.
var devBundleDir = filepath.Join(repo.Root(), "bundle")

// Why a proxy and not IMG=127.0.0.1:<port>/...: the release bundle must
// name the images as they are published (quay.io, docker.io, example.com),
// since that is what an admin mirrors and what an ImageDigestMirrorSet
// matches; a bundle made against loopback names would prove a different
// bundle. crane (go-containerregistry), which hack/bundle.sh resolves tags
// with, honours HTTPS_PROXY and SSL_CERT_FILE, so a loopback proxy that
// answers for those hosts itself lets the real `make bundle` run unchanged
// while no lookup or connection leaves the machine: the proxy dials nothing
// and refuses (and records) any other host.
func TestReleaseBundleNamesEveryImageByDigest(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	dev, _ := readCSV(t, devBundleDir)
	if len(dev.Spec.RelatedImages) == 0 {
		t.Fatalf("%s lists no relatedImages", devBundleDir)
	}

	start := time.Now()
	imgs, err := releasebundle.Images(ctx, filepath.Join(dir, "images"), dev.Spec.RelatedImages)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d images built in %s", len(imgs), time.Since(start).Round(time.Millisecond))

	var hosts []string
	for ref := range imgs {
		h, err := registrymirror.Host(ref)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(hosts, h) {
			hosts = append(hosts, h)
		}
	}
	m, err := registrymirror.Start(dir, hosts...)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()

	// pushed is each image's repository (as a digest reference names it)
	// to its tag and the digest pushed there.
	type pushedImage struct {
		ref    string
		tag    name.Tag
		digest v1.Hash
	}
	pushed := map[string]pushedImage{}
	for ref, img := range imgs {
		i, err := tarball.ImageFromPath(img.Archive, nil)
		if err != nil {
			t.Fatal(err)
		}
		d, err := m.Push(ctx, ref, i)
		if err != nil {
			t.Fatal(err)
		}
		tag, err := name.NewTag(ref)
		if err != nil {
			t.Fatal(err)
		}
		pushed[tag.Context().Name()] = pushedImage{ref: ref, tag: tag, digest: d}
	}
	afterPush := len(m.Requests())

	start = time.Now()
	releaseDir, err := releasebundle.Make(ctx, dir, m.ProxyEnv())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("make bundle USE_IMAGE_DIGESTS=true in %s", time.Since(start).Round(time.Millisecond))
	if r := m.Refused(); len(r) != 0 {
		t.Errorf("the proxy refused %q: make bundle tried to reach a host that is not mirrored", r)
	}
	release, _ := readCSV(t, releaseDir)

	// Every reference is by digest alone, and the digest is the pushed one.
	// tagged maps each digest reference back to the tag it pins.
	tagged := map[string]string{}
	for _, r := range imageReferences(release) {
		d, err := digestOnly(r.ref)
		if err != nil {
			t.Errorf("%s: %v", r.where, err)
			continue
		}
		p, ok := pushed[d.Context().Name()]
		switch {
		case !ok:
			t.Errorf("%s: %s is none of the pushed images", r.where, r.ref)
		case d.DigestStr() != p.digest.String():
			t.Errorf("%s: %s, but %s is %s", r.where, r.ref, p.tag, p.digest)
		default:
			tagged[r.ref] = p.ref
		}
	}

	// relatedImages lists the pushed images, each once, the operator's (the
	// Deployment's image, and containerImage) among them.
	// Names are compared as go-containerregistry spells them in full
	// (docker.io is index.docker.io).
	var related, want []string
	for _, r := range release.Spec.RelatedImages {
		t.Logf("relatedImages %s: %s", r.Name, r.Image)
		related = append(related, canonical(r.Image))
	}
	for _, p := range pushed {
		want = append(want, p.tag.Context().Name()+"@"+p.digest.String())
	}
	slices.Sort(related)
	slices.Sort(want)
	if !slices.Equal(related, want) {
		t.Errorf("relatedImages %q, want the pushed images %q", related, want)
	}
	if operator := canonical(release.Annotations["containerImage"]); !slices.Contains(related, operator) {
		t.Errorf("relatedImages %q lack the operator image %q", related, operator)
	}

	// Nothing but the image references changed.
	compareWithDevBundle(t, releaseDir, tagged)

	// operator-sdk asked the registries for each tag's manifest, and for
	// nothing else.
	served := map[string]bool{}
	for _, r := range m.Requests()[afterPush:] {
		repoPath, ref, isManifest := strings.Cut(strings.TrimPrefix(r.Path, "/v2/"), "/manifests/")
		switch {
		case r.Path == "/v2/" && r.Method == "GET":
		case isManifest && (r.Method == "HEAD" || r.Method == "GET") && r.Status == 200:
			served[r.Host+"/"+repoPath+":"+ref] = true
		default:
			t.Errorf("registry %s was asked %s %s (%d)", r.Host, r.Method, r.Path, r.Status)
		}
	}
	for _, p := range pushed {
		if !served[p.tag.RegistryStr()+"/"+p.tag.RepositoryStr()+":"+p.tag.TagStr()] {
			t.Errorf("no manifest of %s was served: %s was not resolved through the mirror (served %v)", p.tag, p.tag, served)
		}
	}
}

// imageReference is an image reference and where in the CSV it is.
type imageReference struct{ where, ref string }

// imageReferences are the references that make a cluster pull, or that an
// admin mirrors: the containerImage annotation, the images of every
// Deployment's containers, every RELATED_IMAGE_* value (the images the
// operator deploys) and relatedImages.
func imageReferences(csv *v1alpha1.ClusterServiceVersion) []imageReference {
	refs := []imageReference{{"annotation containerImage", csv.Annotations["containerImage"]}}
	for _, d := range csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs {
		for _, c := range slices.Concat(d.Spec.Template.Spec.InitContainers, d.Spec.Template.Spec.Containers) {
			where := fmt.Sprintf("deployment %s container %s", d.Name, c.Name)
			refs = append(refs, imageReference{where + " image", c.Image})
			for _, e := range c.Env {
				if strings.HasPrefix(e.Name, "RELATED_IMAGE_") {
					refs = append(refs, imageReference{where + " env " + e.Name, e.Value})
				}
			}
		}
	}
	for _, r := range csv.Spec.RelatedImages {
		refs = append(refs, imageReference{"relatedImages " + r.Name, r.Image})
	}
	return refs
}

// digestOnly parses ref as a reference by digest alone: a tag beside the
// digest is refused too, since a reader (or a tool) could take the tag for
// what is pulled.
func digestOnly(ref string) (name.Digest, error) {
	repository, _, ok := strings.Cut(ref, "@")
	if !ok {
		return name.Digest{}, fmt.Errorf("%q is not named by digest", ref)
	}
	// The last path element holds the tag, if any (a registry's port is in
	// the first).
	if strings.Contains(path.Base(repository), ":") {
		return name.Digest{}, fmt.Errorf("%q carries a tag beside its digest", ref)
	}
	d, err := name.NewDigest(ref, name.StrictValidation)
	if err != nil {
		return name.Digest{}, err
	}
	if !strings.HasPrefix(d.DigestStr(), "sha256:") {
		return name.Digest{}, fmt.Errorf("%q is not a sha256 digest", ref)
	}
	return d, nil
}

// canonical is ref as go-containerregistry names it in full, or ref itself
// when it does not parse (already reported).
func canonical(ref string) string {
	r, err := name.ParseReference(ref)
	if err != nil {
		return ref
	}
	return r.Name()
}

// compareWithDevBundle checks that the release bundle in releaseDir is the
// committed one but for its image references: its CSV, with each digest
// reference put back to the tag it pins (tagged), equals the committed CSV,
// relatedImages in the same order, and every other file is the same byte
// for byte.
func compareWithDevBundle(t *testing.T, releaseDir string, tagged map[string]string) {
	t.Helper()
	_, want := readCSV(t, devBundleDir)
	_, got := readCSV(t, releaseDir)
	untag(got, tagged)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the release CSV differs from the committed one beyond its image references (-committed +release):\n%s", diff)
	}

	var devFiles, releaseFiles []string
	for d, files := range map[string]*[]string{devBundleDir: &devFiles, releaseDir: &releaseFiles} {
		err := filepath.WalkDir(d, func(p string, e os.DirEntry, err error) error {
			if err != nil || e.IsDir() {
				return err
			}
			rel, err := filepath.Rel(d, p)
			*files = append(*files, rel)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	slices.Sort(devFiles)
	slices.Sort(releaseFiles)
	if !slices.Equal(devFiles, releaseFiles) {
		t.Errorf("release bundle files %q, committed %q", releaseFiles, devFiles)
	}
	for _, f := range devFiles {
		if f == filepath.FromSlash(releasebundle.CSVFile) {
			continue
		}
		a, errA := os.ReadFile(filepath.Join(devBundleDir, f))
		b, errB := os.ReadFile(filepath.Join(releaseDir, f))
		if errA != nil || errB != nil || !bytes.Equal(a, b) {
			t.Errorf("%s differs between the committed and the release bundle (%v, %v)", f, errA, errB)
		}
	}
}

// untag replaces, everywhere in obj, each string that is a key of tagged
// by its value.
func untag(obj any, tagged map[string]string) any {
	switch v := obj.(type) {
	case map[string]any:
		for k, e := range v {
			v[k] = untag(e, tagged)
		}
	case []any:
		for i, e := range v {
			v[i] = untag(e, tagged)
		}
	case string:
		if t, ok := tagged[v]; ok {
			return t
		}
	}
	return obj
}

// readCSV decodes the CSV of the bundle in bundleDir, as a CSV and as it is
// written.
func readCSV(t *testing.T, bundleDir string) (*v1alpha1.ClusterServiceVersion, map[string]any) {
	t.Helper()
	file := filepath.Join(bundleDir, releasebundle.CSVFile)
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var csv v1alpha1.ClusterServiceVersion
	var obj map[string]any
	if err := errors.Join(yaml.Unmarshal(data, &csv), yaml.Unmarshal(data, &obj)); err != nil {
		t.Fatalf("decoding %s: %v", file, err)
	}
	return &csv, obj
}
