package controllers

import (
	"encoding/json"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
)

// TestStatusPatch applies each patch to the stored object as the API server
// does, and checks that the status becomes the new one while the rest stays.
func TestStatusPatch(t *testing.T) {
	ready := metav1.Condition{Type: cachev1.ConditionAvailable, Status: metav1.ConditionTrue, Reason: "Ready", Message: "3 pods ready"}
	full := cachev1.MemcachedStatus{Nodes: []string{"a", "b", "c"}, ReadyReplicas: 3, Selector: "app=x", Endpoint: "x.ns.svc:11211",
		ObservedGeneration: 2, Conditions: []metav1.Condition{ready}}
	for _, tc := range []struct {
		name     string
		from, to cachev1.MemcachedStatus
	}{
		{"first status", cachev1.MemcachedStatus{}, full},
		{"a pod fewer", full, func() cachev1.MemcachedStatus { s := full; s.Nodes, s.ReadyReplicas = []string{"a", "b"}, 2; return s }()},
		{"fields dropped", full, cachev1.MemcachedStatus{Selector: "app=x"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stored := cachev1.Memcached{ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: "ns", ResourceVersion: "7", Labels: map[string]string{"team": "a"}},
				Spec: cachev1.MemcachedSpec{Size: ptr.To[int32](3)}, Status: tc.from}
			patch, err := statusPatch(tc.from, tc.to, "7")
			if err != nil {
				t.Fatal(err)
			}
			var sent struct {
				Metadata map[string]any `json:"metadata"`
				Spec     any            `json:"spec"`
			}
			if err := json.Unmarshal(patch, &sent); err != nil {
				t.Fatal(err)
			}
			if len(sent.Metadata) != 1 || sent.Metadata["resourceVersion"] != "7" || sent.Spec != nil {
				t.Errorf("patch %s: want the resourceVersion and the status only", patch)
			}
			before, err := json.Marshal(stored)
			if err != nil {
				t.Fatal(err)
			}
			after, err := jsonpatch.MergePatch(before, patch)
			if err != nil {
				t.Fatal(err)
			}
			var got cachev1.Memcached
			if err := json.Unmarshal(after, &got); err != nil {
				t.Fatal(err)
			}
			want := stored
			want.Status = tc.to
			if !equality.Semantic.DeepEqual(got, want) {
				t.Errorf("patched object:\n%s\nwant status %+v and the rest unchanged", after, tc.to)
			}
		})
	}
}
