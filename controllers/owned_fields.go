package controllers

import (
	"crypto/sha256"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ownedFields remembers, for each object the operator applies, that the
// fields it owns in it were found equal to what it wants, or were just
// written as it wants them (an apply's answer carries the operator's new
// entry), so that the next reconcile of an unchanged object need not extract
// them again: extraction walks the object's managed fields through its
// schema, the costliest step of a reconcile in a creation burst.
//
// What is remembered is the operator's managed-fields entry, not the
// object's resourceVersion, which the Deployment controller and the
// disruption controller change with every status update. The entry is
// enough because server-side apply keeps it exact: a write by anyone else
// that changes or removes a field the operator owns takes that field out of
// the operator's entry (an update transfers it, a forced apply moves it, and
// a removed field leaves every entry). So while the entry is unchanged, so
// are the values it covers; and while the desired-hash annotation that
// stands for what the operator wants is unchanged, so is the want.
type ownedFields struct {
	mu sync.Mutex
	// verified is keyed by the Memcached, then by the kind of its object.
	verified map[types.NamespacedName]map[string]verifiedFields
}

// verifiedFields is one comparison that found the owned fields equal to the
// want: of which object, at which managed-fields entry, for which want.
type verifiedFields struct {
	uid   types.UID
	entry [sha256.Size]byte
	want  string
}

func newOwnedFields() *ownedFields {
	return &ownedFields{verified: map[types.NamespacedName]map[string]verifiedFields{}}
}

// unchanged reports whether the fields owned by FieldOwner in live were
// found equal to the want of desired-hash wantHash, and have not changed
// since.
func (o *ownedFields) unchanged(mc types.NamespacedName, kind string, live client.Object, wantHash string) bool {
	entry, ok := appliedEntry(live)
	if !ok {
		return false
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	v, ok := o.verified[mc][kind]
	return ok && v.uid == live.GetUID() && v.entry == entry && v.want == wantHash
}

// remember records that the fields owned in live equal the want of
// desired-hash wantHash.
func (o *ownedFields) remember(mc types.NamespacedName, kind string, live client.Object, wantHash string) {
	entry, ok := appliedEntry(live)
	if !ok {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.verified[mc] == nil {
		o.verified[mc] = map[string]verifiedFields{}
	}
	o.verified[mc][kind] = verifiedFields{uid: live.GetUID(), entry: entry, want: wantHash}
}

// forget drops what is remembered of mc's objects: mc is gone.
func (o *ownedFields) forget(mc types.NamespacedName) {
	o.mu.Lock()
	defer o.mu.Unlock()
	delete(o.verified, mc)
}

// appliedEntry is a digest of the managed-fields entry of FieldOwner's
// applies to the main resource of obj: the field set and its API version.
// A digest, not the entry, so that a thousand Deployments' entries are not
// held twice.
func appliedEntry(obj client.Object) ([sha256.Size]byte, bool) {
	for _, e := range obj.GetManagedFields() {
		if e.Manager != FieldOwner || e.Operation != metav1.ManagedFieldsOperationApply || e.Subresource != "" ||
			e.FieldsV1 == nil {
			continue
		}
		h := sha256.New()
		h.Write([]byte(e.APIVersion))
		h.Write([]byte{0})
		h.Write(e.FieldsV1.GetRawBytes())
		var sum [sha256.Size]byte
		h.Sum(sum[:0])
		return sum, true
	}
	return [sha256.Size]byte{}, false
}
