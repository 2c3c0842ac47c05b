package main

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/gomega"
)

// rendered is what `opm render -o yaml` prints for bundles: each CSV
// (name, replaces, skipRange) travels base64-encoded in an
// olm.bundle.object property, beside another manifest.
func rendered(t *testing.T, csvs ...[3]string) []byte {
	t.Helper()
	object := func(v any) string {
		raw, err := json.Marshal(v)
		NewWithT(t).Expect(err).NotTo(HaveOccurred())
		return "- type: olm.bundle.object\n  value:\n    data: " + base64.StdEncoding.EncodeToString(raw) + "\n"
	}
	var out strings.Builder
	for _, c := range csvs {
		csv := map[string]any{
			"kind":     "ClusterServiceVersion",
			"metadata": map[string]any{"name": c[0], "annotations": map[string]string{"olm.skipRange": c[2]}},
			"spec":     map[string]any{"replaces": c[1]},
		}
		out.WriteString("---\nimage: \"\"\nname: " + c[0] + "\npackage: p\nproperties:\n- type: olm.package\n  value:\n    packageName: p\n" +
			object(map[string]any{"kind": "CustomResourceDefinition"}) + object(csv) + "schema: olm.bundle\n")
	}
	return []byte(out.String())
}

func TestChannelEntriesCopyEachCSVsEdges(t *testing.T) {
	got, err := channelEntries(rendered(t,
		[3]string{"p.v0.1.0", "p.v0.0.9", ">=0.0.0 <0.1.0"},
		[3]string{"p.v0.2.0", "p.v0.1.0", ">=0.0.0 <0.2.0"},
	))
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	// The first bundle keeps its replaces, although the catalog no longer
	// holds that bundle: the catalog format allows it.
	want := []entry{
		{Name: "p.v0.1.0", Replaces: "p.v0.0.9", SkipRange: ">=0.0.0 <0.1.0"},
		{Name: "p.v0.2.0", Replaces: "p.v0.1.0", SkipRange: ">=0.0.0 <0.2.0"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("entries (-want +got):\n%s", diff)
	}
	blobs := channelBlobs("p", []string{"fast", "stable"}, got)
	if strings.Count(blobs, "schema: olm.channel") != 2 || !strings.Contains(blobs, "name: stable") ||
		!strings.Contains(blobs, "skipRange: '>=0.0.0 <0.2.0'") {
		t.Errorf("channel blobs:\n%s", blobs)
	}
}

func TestChannelEntriesRefuseABrokenChain(t *testing.T) {
	for name, in := range map[string][]byte{
		"a bundle that does not replace the one before": rendered(t,
			[3]string{"p.v0.1.0", "", ">=0.0.0 <0.1.0"},
			[3]string{"p.v0.3.0", "p.v0.2.0", ">=0.0.0 <0.3.0"}),
		"a second bundle that replaces nothing": rendered(t,
			[3]string{"p.v0.1.0", "", ">=0.0.0 <0.1.0"},
			[3]string{"p.v0.2.0", "", ">=0.0.0 <0.2.0"}),
		"no bundle":              []byte("---\nschema: olm.package\nname: p\n"),
		"a bundle without a CSV": []byte("---\nname: p.v0.1.0\nschema: olm.bundle\nproperties:\n- type: olm.package\n  value: {}\n"),
	} {
		t.Run(name, func(t *testing.T) {
			if entries, err := channelEntries(in); err == nil {
				t.Errorf("accepted: %+v", entries)
			}
		})
	}
}
