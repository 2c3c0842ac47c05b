package controllers

import (
	"context"
	"encoding/json"
	"fmt"

	jsonpatch "github.com/evanphx/json-patch/v5"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
)

// writeStatus replaces mc's status with st.
//
// The patch is computed from the two statuses alone, and the answer is read
// as metadata only: the operator needs nothing of the written object but its
// resourceVersion (see statusEchoes). A patch computed from the whole
// object (client.MergeFrom) encodes the spec twice to find it unchanged,
// and the answer would be the whole object decoded again, on every status
// write of a creation burst.
func (r *MemcachedReconciler) writeStatus(ctx context.Context, mc *cachev1.Memcached, st cachev1.MemcachedStatus) error {
	data, err := statusPatch(mc.Status, st, mc.ResourceVersion)
	if err != nil {
		return fmt.Errorf("writing status: %w", err)
	}
	written := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: mc.Namespace, Name: mc.Name}}
	written.SetGroupVersionKind(cachev1.GroupVersion.WithKind("Memcached"))
	err = r.client.Status().Patch(ctx, written, client.RawPatch(types.MergePatchType, data))
	if apierrors.IsConflict(err) {
		// A newer Memcached is on its way to the cache; its update event
		// reconciles again.
		log.FromContext(ctx).V(1).Info("status write raced a newer object; waiting for it")
		return nil
	}
	if err != nil {
		return fmt.Errorf("writing status: %w", err)
	}
	r.echoes.wrote(written)
	return nil
}

// statusPatch is the JSON merge patch that turns status from into to, on
// the object of resourceVersion rv only: the resourceVersion makes a patch
// computed from a stale cached object fail instead of undoing a newer
// write.
func statusPatch(from, to cachev1.MemcachedStatus, rv string) ([]byte, error) {
	fromJSON, err := json.Marshal(from)
	if err != nil {
		return nil, err
	}
	toJSON, err := json.Marshal(to)
	if err != nil {
		return nil, err
	}
	diff, err := jsonpatch.CreateMergePatch(fromJSON, toJSON)
	if err != nil {
		return nil, err
	}
	type meta struct {
		ResourceVersion string `json:"resourceVersion"`
	}
	return json.Marshal(struct {
		Metadata meta            `json:"metadata"`
		Status   json.RawMessage `json:"status"`
	}{meta{rv}, diff})
}
