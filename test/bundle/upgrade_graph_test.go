package bundle

import (
	"strings"
	"testing"

	"github.com/blang/semver/v4"

	"github.com/example-inc/memcached-operator/hack/repo"
)

// makeDefault is the Makefile's default for name.
func makeDefault(t *testing.T, name string) string {
	t.Helper()
	v, err := repo.MakeDefault(name)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// The bundle is in the channels fast and stable, stable being the one a
// Subscription without a channel follows, as the Makefile's CHANNELS and
// DEFAULT_CHANNEL say (operator-sdk writes them into the metadata).
func TestChannelsAreFastAndStable(t *testing.T) {
	a := bundleAnnotations(t)
	channels, def := makeDefault(t, "CHANNELS"), makeDefault(t, "DEFAULT_CHANNEL")
	if channels != "fast,stable" || def != "stable" {
		t.Errorf("the Makefile's CHANNELS %q and DEFAULT_CHANNEL %q, want fast,stable and stable", channels, def)
	}
	if a[annotationChannels] != channels {
		t.Errorf("bundle channels %q, Makefile CHANNELS %q: run make bundle", a[annotationChannels], channels)
	}
	if a[annotationDefault] != def {
		t.Errorf("bundle default channel %q, Makefile DEFAULT_CHANNEL %q: run make bundle", a[annotationDefault], def)
	}
}

// The upgrade edges are the ones OLM documents for a release that keeps
// every older one installable: spec.replaces names the release before
// (PREVIOUS_VERSION; none for the first), and olm.skipRange takes any
// older version straight to this one. VERSION is the CSV's version.
func TestUpgradeEdges(t *testing.T) {
	csv := loadBundle(t).CSV
	version := makeDefault(t, "VERSION")
	if got := csv.Spec.Version.String(); got != version {
		t.Errorf("CSV version %s, Makefile VERSION %s: run make bundle", got, version)
	}
	v := semver.MustParse(version)

	skip := csv.Annotations["olm.skipRange"]
	if want := ">=0.0.0 <" + version; skip != want {
		t.Errorf("olm.skipRange %q, want %q", skip, want)
	}
	// OLM parses the range with blang/semver; it must hold every older
	// version and not this one.
	inRange, err := semver.ParseRange(skip)
	if err != nil {
		t.Fatalf("olm.skipRange %q: %v", skip, err)
	}
	if inRange(v) || !inRange(semver.MustParse("0.0.0")) {
		t.Errorf("olm.skipRange %q: holds %s: %t, holds 0.0.0: %t", skip, v, inRange(v), inRange(semver.MustParse("0.0.0")))
	}

	previous := makeDefault(t, "PREVIOUS_VERSION")
	if previous == "" {
		if csv.Spec.Replaces != "" {
			t.Errorf("spec.replaces %q, but the Makefile's PREVIOUS_VERSION is empty: run make bundle", csv.Spec.Replaces)
		}
		return
	}
	if want := packageName + ".v" + previous; csv.Spec.Replaces != want {
		t.Errorf("spec.replaces %q, want %q (PREVIOUS_VERSION): run make bundle", csv.Spec.Replaces, want)
	}
	p, err := semver.Parse(previous)
	if err != nil || !p.LT(v) || !inRange(p) {
		t.Errorf("PREVIOUS_VERSION %q must be a version below VERSION %s and in olm.skipRange (%v)", previous, v, err)
	}
	if !strings.HasPrefix(csv.Spec.Replaces, packageName+".v") {
		t.Errorf("spec.replaces %q is not a CSV of package %s", csv.Spec.Replaces, packageName)
	}
}
