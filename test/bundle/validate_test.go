package bundle

import (
	"strings"
	"testing"

	"github.com/operator-framework/api/pkg/validation"
	"github.com/operator-framework/api/pkg/validation/errors"
	interfaces "github.com/operator-framework/api/pkg/validation/interfaces"
)

// validators are the checks OperatorHub and the Operator SDK run on a
// bundle: the default bundle validators (CSV, CRD, bundle), OperatorHub v2
// with its split-out capabilities and categories checks, good practices and
// removed APIs. The multi-architecture validator is left out: it pulls the
// images.
var validators = interfaces.Validators{
	validation.ClusterServiceVersionValidator,
	validation.CustomResourceDefinitionValidator,
	validation.BundleValidator,
	validation.OperatorHubV2Validator,
	validation.StandardCapabilitiesValidator,
	validation.StandardCategoriesValidator,
	validation.GoodPracticesValidator,
	validation.AlphaDeprecatedAPIsValidator,
	validation.ObjectValidator,
}

// expectedWarning is a warning the bundle is known to raise, and why it is
// accepted rather than fixed.
type expectedWarning struct {
	// contains is a part of the warning's text that identifies it.
	contains string
	// why the warning stays.
	why string
}

// expectedWarnings lists every warning the validators may raise on bundle/.
// A warning not listed fails the test, and so does a listed one that no
// longer occurs: keep the list exact.
// It is empty: the channels, fast and stable, are the ones good practices
// name, so the bundle raises no warning at all.
var expectedWarnings = []expectedWarning{}

func TestBundlePassesValidators(t *testing.T) {
	b := loadBundle(t)
	results := validators.Validate(b.ObjectsToValidate()...)

	seen := make([]bool, len(expectedWarnings))
	for _, r := range results {
		for _, e := range r.Errors {
			t.Errorf("%s: %s", r.Name, e)
		}
		for _, w := range r.Warnings {
			if i := matchWarning(w); i >= 0 {
				seen[i] = true
				t.Logf("expected warning (%s): %s", expectedWarnings[i].why, w)
				continue
			}
			t.Errorf("unexpected warning from %s: %s", r.Name, w)
		}
	}
	for i, ok := range seen {
		if !ok {
			t.Errorf("expected warning %q no longer occurs: remove it from expectedWarnings", expectedWarnings[i].contains)
		}
	}
}

func matchWarning(w errors.Error) int {
	for i, e := range expectedWarnings {
		if strings.Contains(w.Error(), e.contains) {
			return i
		}
	}
	return -1
}
