// Package v1 holds the cache.example.com/v1 API: the Memcached kind.
//
// +kubebuilder:object:generate=true
// +groupName=cache.example.com
package v1
