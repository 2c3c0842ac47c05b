package controllers

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/example-inc/memcached-operator/api/v1/gen"
)

func TestDesiredService(t *testing.T) {
	s := desiredService(gen.Memcached("ns", "a"))
	if *s.Spec.ClusterIP != corev1.ClusterIPNone {
		t.Errorf("clusterIP = %q, want headless", *s.Spec.ClusterIP)
	}
	if !*s.Spec.PublishNotReadyAddresses {
		t.Error("publishNotReadyAddresses = false: a pod whose readiness blips would leave clients' server lists")
	}
	if *s.Spec.Ports[0].Port != 11211 {
		t.Errorf("port = %d", *s.Spec.Ports[0].Port)
	}
}
