package controllers

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/event"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
)

func TestStatusEchoes(t *testing.T) {
	at := func(name, rv string) *cachev1.Memcached {
		return &cachev1.Memcached{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: rv}}
	}
	update := func(f interface{ Update(event.UpdateEvent) bool }, rv string) bool {
		return f.Update(event.UpdateEvent{ObjectOld: at("cache", "1"), ObjectNew: at("cache", rv)})
	}
	s := newStatusEchoes()
	f := s.filter()
	if !update(f, "2") {
		t.Error("an update with no status write before it was dropped")
	}
	s.wrote(at("cache", "3"))
	if !update(f, "2") {
		t.Error("an update older than the status write was dropped")
	}
	if update(f, "3") {
		t.Error("the echo of the status write was passed")
	}
	if !update(f, "3") {
		t.Error("the same version was dropped twice: an echo comes once")
	}
	s.wrote(at("cache", "5"))
	if !f.Update(event.UpdateEvent{ObjectOld: at("other", "1"), ObjectNew: at("other", "5")}) {
		t.Error("another Memcached's update of the same version was dropped")
	}
	s.forget(types.NamespacedName{Namespace: "ns", Name: "cache"})
	if !update(f, "5") {
		t.Error("an update after forget was dropped")
	}
	if !f.Create(event.CreateEvent{Object: at("cache", "5")}) || !f.Delete(event.DeleteEvent{Object: at("cache", "5")}) {
		t.Error("a create or delete was dropped")
	}
}
