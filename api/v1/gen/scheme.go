package gen

import (
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
)

// Scheme returns a scheme of Kubernetes' own types and Memcached, with the
// types of each of more: what a test's client needs to create the objects
// gen builds, and whatever else it reads.
func Scheme(more ...func(*runtime.Scheme) error) *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range append([]func(*runtime.Scheme) error{clientgoscheme.AddToScheme, cachev1.AddToScheme}, more...) {
		utilruntime.Must(add(s))
	}
	return s
}
