package bundle

import (
	"testing"

	"github.com/operator-framework/api/pkg/validation"
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

// The bundle raises no warning at all: the channels, fast and stable, are
// the ones good practices name. A warning that has to stay would be
// accepted here with its reason.
func TestBundlePassesValidators(t *testing.T) {
	for _, r := range validators.Validate(loadBundle(t).ObjectsToValidate()...) {
		for _, e := range r.Errors {
			t.Errorf("%s: %s", r.Name, e)
		}
		for _, w := range r.Warnings {
			t.Errorf("unexpected warning from %s: %s", r.Name, w)
		}
	}
}
