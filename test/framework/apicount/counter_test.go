package apicount

import "testing"

func TestResource(t *testing.T) {
	tests := map[string]string{
		"/apis/apps/v1/namespaces/ns/deployments":                         "deployments",
		"/apis/apps/v1/namespaces/ns/deployments/x":                       "deployments",
		"/apis/apps/v1/namespaces/ns/deployments/x/scale":                 "deployments/scale",
		"/apis/cache.example.com/v1/namespaces/ns/memcacheds/m/status":    "memcacheds/status",
		"/api/v1/namespaces/ns/pods":                                      "pods",
		"/api/v1/namespaces/ns":                                           "namespaces",
		"/api/v1/namespaces":                                              "namespaces",
		"/apis/events.k8s.io/v1/namespaces/ns/events":                     "events",
		"/apis/coordination.k8s.io/v1/namespaces/ns/leases/operator-lock": "leases",
		"/api/v1/nodes/n1/status":                                         "nodes/status",
		"/healthz":                                                        "/healthz",
		"/apis":                                                           "/apis",
	}
	for path, want := range tests {
		if got := Resource(path); got != want {
			t.Errorf("Resource(%q) = %q, want %q", path, got, want)
		}
	}
}
