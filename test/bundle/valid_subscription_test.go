package bundle

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// validSubscription is the CSV annotation that tells an OpenShift admin
// which subscriptions entitle them to run the operator.
const validSubscription = "operators.openshift.io/valid-subscription"

// openShiftSubscriptions are the values the OpenShift console files under
// the OpenShift subscriptions themselves (openshift/console's
// ValidSubscriptionValue); it lists any other value as "Requires separate
// subscription".
var openShiftSubscriptions = []string{
	"OpenShift Kubernetes Engine",
	"OpenShift Container Platform",
	"OpenShift Platform Plus",
}

// valid-subscription is what Red Hat's release policy (Conforma's
// olm.subscriptions_annotation_format) requires, a JSON array of unique
// strings with at least one, with no empty name; and it says what is true
// of this operator: it is free, so any OpenShift subscription is enough and
// it names only those, which the console shows as needing no separate one.
func TestValidSubscriptionAnnotation(t *testing.T) {
	raw, ok := loadBundle(t).CSV.Annotations[validSubscription]
	if !ok {
		t.Fatalf("the CSV has no %s annotation", validSubscription)
	}
	var subs []string
	if err := json.Unmarshal([]byte(raw), &subs); err != nil {
		t.Fatalf("%s %q is not a JSON array of strings: %v", validSubscription, raw, err)
	}
	if len(subs) == 0 {
		t.Errorf("%s is an empty array", validSubscription)
	}
	seen := map[string]bool{}
	for _, s := range subs {
		switch {
		case strings.TrimSpace(s) == "":
			t.Errorf("%s %q holds an empty name", validSubscription, raw)
		case seen[s]:
			t.Errorf("%s %q names %q twice", validSubscription, raw, s)
		case !slices.Contains(openShiftSubscriptions, s):
			t.Errorf("%s names %q, which the console shows as a separate subscription to buy; the operator needs none", validSubscription, s)
		}
		seen[s] = true
	}
}
