package bundle

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	crdcel "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/model"
	"k8s.io/apimachinery/pkg/util/version"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	apiservercel "k8s.io/apiserver/pkg/cel"
	"k8s.io/apiserver/pkg/cel/environment"

	"github.com/example-inc/memcached-operator/controllers/operand"
)

// annotationOpenShiftVersions is the bundle metadata annotation (and image
// label) that names the OpenShift releases a bundle is offered to. "v4.16"
// means 4.16 and later.
const annotationOpenShiftVersions = "com.redhat.openshift.versions"

// requirement is something the bundle ships that only a Kubernetes release
// from 1.<minor> on accepts as written.
type requirement struct {
	what  string
	minor int
}

// gatedField is an API field the operator writes that older Kubernetes
// releases drop, because its feature gate was off by default there.
type gatedField struct {
	field string
	// onByDefault is the minor of the first release whose feature gate is on
	// by default, from k8s.io/kubernetes v1.37.2 pkg/features/kube_features.go.
	onByDefault int
	// used reports whether the operator still writes the field.
	used func() bool
}

// gatedFields lists every such field. A row whose field the operator no
// longer writes fails the test: keep the list exact.
var gatedFields = []gatedField{{
	// MatchLabelKeysInPodTopologySpread: alpha 1.25 (off), beta 1.27 (on).
	// Without it the API server drops matchLabelKeys, and the default spread
	// weighs every memcached pod of the namespace instead of one Memcached's
	// pods of one rollout.
	field:       "topologySpreadConstraints[].matchLabelKeys of the default spread (feature gate MatchLabelKeysInPodTopologySpread)",
	onByDefault: 27,
	used: func() bool {
		return slices.ContainsFunc(operand.DefaultTopologySpread(), func(c corev1.TopologySpreadConstraint) bool {
			return len(c.MatchLabelKeys) > 0
		})
	},
}}

// openShiftKubernetes maps each OpenShift 4 minor to the Kubernetes minor it
// is built on. Source: Red Hat's "What version of the Kubernetes API is
// included with each OpenShift 4.x release?"
// (https://access.redhat.com/solutions/4870701) and each release's notes
// ("OpenShift Container Platform 4.16 ... Kubernetes 1.29").
var openShiftKubernetes = map[int]int{
	12: 25, 13: 26, 14: 27, 15: 28, 16: 29, 17: 30, 18: 31, 19: 32,
}

// oldestCELCompatibility is the oldest CEL compatibility version the rules
// are compiled against. A rule that compiles there counts as needing the
// release after it: the bundle claims nothing older than that for CEL.
const oldestCELCompatibility = 26

// The CSV's minKubeVersion is the newest release any part of the bundle
// needs: no lower, or OLM starts an install the API server then refuses or
// silently changes; no higher, or the bundle hides itself from clusters it
// runs on.
func TestMinKubeVersionIsWhatTheBundleNeeds(t *testing.T) {
	b := loadBundle(t)
	var needs []requirement
	for _, crd := range b.V1CRDs {
		needs = append(needs, celRequirements(t, crd)...)
	}
	needs = append(needs, fieldRequirements(t)...)
	want := 0
	for _, n := range needs {
		t.Logf("needs Kubernetes 1.%d: %s", n.minor, n.what)
		want = max(want, n.minor)
	}

	got := minKubeMinor(t, b.CSV.Spec.MinKubeVersion)
	for _, n := range needs {
		if n.minor > got {
			t.Errorf("minKubeVersion is %s, but %s needs Kubernetes 1.%d: raise minKubeVersion in config/manifests/bases and run make bundle",
				b.CSV.Spec.MinKubeVersion, n.what, n.minor)
		}
	}
	if got > want {
		t.Errorf("minKubeVersion is %s, but nothing in the bundle needs more than 1.%d.0: lower it in config/manifests/bases and run make bundle",
			b.CSV.Spec.MinKubeVersion, want)
	}
}

// The bundle is offered to the OpenShift releases built on minKubeVersion or
// later, and to no older one.
func TestOpenShiftVersionsFollowMinKubeVersion(t *testing.T) {
	b := loadBundle(t)
	kube := minKubeMinor(t, b.CSV.Spec.MinKubeVersion)
	var want string
	for ocp, k := range openShiftKubernetes {
		if k == kube {
			want = fmt.Sprintf("v4.%d", ocp)
		}
	}
	if want == "" {
		t.Fatalf("no OpenShift release in openShiftKubernetes is built on Kubernetes 1.%d: add it", kube)
	}
	got, ok := bundleAnnotations(t)[annotationOpenShiftVersions]
	if !ok {
		t.Fatalf("bundle/metadata/annotations.yaml has no %s; hack/bundle.sh adds it", annotationOpenShiftVersions)
	}
	if got != want {
		t.Errorf("%s is %q, want %q: the first OpenShift built on minKubeVersion %s (set OPENSHIFT_VERSIONS in the Makefile and run make bundle)",
			annotationOpenShiftVersions, got, want, b.CSV.Spec.MinKubeVersion)
	}
}

var minKubeVersionForm = regexp.MustCompile(`^1\.(\d+)\.0$`)

// minKubeMinor returns the minor of a minKubeVersion of the form 1.<minor>.0:
// a patch release is never what an API needs.
func minKubeMinor(t *testing.T, v string) int {
	t.Helper()
	m := minKubeVersionForm.FindStringSubmatch(v)
	if m == nil {
		t.Fatalf("minKubeVersion %q is not of the form 1.<minor>.0", v)
	}
	minor, err := strconv.Atoi(m[1])
	if err != nil {
		t.Fatal(err)
	}
	return minor
}

func fieldRequirements(t *testing.T) []requirement {
	var needs []requirement
	for _, f := range gatedFields {
		if !f.used() {
			t.Errorf("the operator no longer writes %s: remove it from gatedFields", f.field)
			continue
		}
		needs = append(needs, requirement{what: f.field, minor: f.onByDefault})
	}
	return needs
}

// celRequirements compiles every x-kubernetes-validations rule of crd as an
// API server compiles the rules of a CRD it is sent to create: against the
// NewExpressions environment of its compatibility version
// (k8s.io/apiextensions-apiserver validation.go, preexistingExpressions).
// That version is one minor below the server's own
// (environment.DefaultCompatibilityVersion: component-base's
// minCompatibilityVersion, the emulation version minus one; Kubernetes 1.29's
// k8s.io/apiserver base.go still had it as the constant 1.28), so that a
// rollback keeps every stored rule compilable. A library introduced in 1.n is
// thus open to new rules from Kubernetes 1.(n+1).
//
// For each rule it finds the oldest compatibility version from which the
// rule compiles in every environment up to this module's, and returns the
// release after it.
func celRequirements(t *testing.T, crd *apiextensionsv1.CustomResourceDefinition) []requirement {
	t.Helper()
	newest := int(environment.DefaultCompatibilityVersion().Minor())
	if newest < oldestCELCompatibility {
		t.Fatalf("this module's CEL compatibility version 1.%d is older than 1.%d", newest, oldestCELCompatibility)
	}
	var needs []requirement
	for _, v := range crd.Spec.Versions {
		if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
			continue
		}
		var internal apiextensions.JSONSchemaProps
		if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(v.Schema.OpenAPIV3Schema, &internal, nil); err != nil {
			t.Fatalf("CRD %s %s: %v", crd.Name, v.Name, err)
		}
		root, err := structuralschema.NewStructural(&internal)
		if err != nil {
			t.Fatalf("CRD %s %s: %v", crd.Name, v.Name, err)
		}
		for _, node := range ruleNodes(root, "", true) {
			// oldest[i] is the oldest compatibility minor from which rule i
			// compiles up to newest; newest+1 while it fails at newest.
			oldest := slices.Repeat([]int{newest + 1}, len(node.schema.XValidations))
			for m := newest; m >= oldestCELCompatibility; m-- {
				results, err := crdcel.Compile(node.schema, node.declType, celconfig.PerCallLimit,
					environment.MustBaseEnvSet(version.MajorMinor(1, uint(m))), crdcel.NewExpressionsEnvLoader())
				if err != nil {
					t.Fatalf("CRD %s %s at %s: %v", crd.Name, v.Name, node.path, err)
				}
				for i, r := range results {
					compiles := r.Error == nil && r.MessageExpressionError == nil
					if compiles && oldest[i] == m+1 {
						oldest[i] = m
					}
					if !compiles && m == newest {
						t.Errorf("CRD %s %s at %s: rule %q does not compile for Kubernetes 1.%d: %v %v",
							crd.Name, v.Name, node.path, node.schema.XValidations[i].Rule, newest+1, r.Error, r.MessageExpressionError)
					}
				}
			}
			for i, m := range oldest {
				if m > newest {
					continue
				}
				from := fmt.Sprintf("from CEL compatibility version 1.%d", m)
				if m == oldestCELCompatibility {
					from = fmt.Sprintf("in every CEL environment checked, 1.%d on", m)
				}
				needs = append(needs, requirement{
					what: fmt.Sprintf("CRD %s %s rule at %s, %q (compiles for new rules %s)",
						crd.Name, v.Name, node.path, abbreviate(node.schema.XValidations[i].Rule), from),
					minor: m + 1,
				})
			}
		}
	}
	return needs
}

// ruleNode is a schema node that holds x-kubernetes-validations, with the CEL
// type its rules see as self.
type ruleNode struct {
	path     string
	schema   *structuralschema.Structural
	declType *apiservercel.DeclType
}

// ruleNodes walks s as the API server's CRD validation does: the root and
// every embedded resource are typed as objects with apiVersion, kind and
// metadata.
func ruleNodes(s *structuralschema.Structural, path string, root bool) []ruleNode {
	var nodes []ruleNode
	if len(s.XValidations) > 0 {
		nodes = append(nodes, ruleNode{path: "." + strings.TrimPrefix(path, "."), schema: s,
			declType: model.SchemaDeclType(s, root || s.XEmbeddedResource)})
	}
	for _, name := range slices.Sorted(maps.Keys(s.Properties)) {
		p := s.Properties[name]
		nodes = append(nodes, ruleNodes(&p, path+"."+name, false)...)
	}
	if s.Items != nil {
		nodes = append(nodes, ruleNodes(s.Items, path+"[*]", false)...)
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Structural != nil {
		nodes = append(nodes, ruleNodes(s.AdditionalProperties.Structural, path+"[*]", false)...)
	}
	return nodes
}

// abbreviate keeps a long rule readable in a message.
func abbreviate(rule string) string {
	rule = strings.Join(strings.Fields(rule), " ")
	if len(rule) > 60 {
		return rule[:57] + "..."
	}
	return rule
}
