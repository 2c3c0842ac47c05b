package controllers

import (
	"fmt"

	"k8s.io/client-go/discovery"

	corev1 "k8s.io/api/core/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
)

// Platform is the kind of cluster the operator runs on, as far as pod
// security is concerned.
type Platform string

const (
	// PlatformKubernetes admits pods under Pod Security "restricted", which
	// needs a numeric non-root user for images whose USER is a name.
	PlatformKubernetes Platform = "Kubernetes"
	// PlatformOpenShift admits pods under the restricted-v2 SCC, which
	// assigns a UID from the namespace's range and rejects a fixed one.
	PlatformOpenShift Platform = "OpenShift"
)

// openShiftSecurityGroup is served only by OpenShift; it holds the
// SecurityContextConstraints that decide which UIDs a pod may use.
const openShiftSecurityGroup = "security.openshift.io"

// memcachedUID is the memcache user of the official memcached image.
const memcachedUID = 11211

// DetectPlatform asks the API server's discovery which Platform it is.
func DetectPlatform(dc discovery.DiscoveryInterface) (Platform, error) {
	groups, err := dc.ServerGroups()
	if err != nil {
		return "", fmt.Errorf("discovering API groups: %w", err)
	}
	for _, g := range groups.Groups {
		if g.Name == openShiftSecurityGroup {
			return PlatformOpenShift, nil
		}
	}
	return PlatformKubernetes, nil
}

// podSecurityContext is admitted by both Pod Security "restricted" and
// restricted-v2; only the user differs.
func podSecurityContext(p Platform) *corev1ac.PodSecurityContextApplyConfiguration {
	sc := corev1ac.PodSecurityContext().
		WithRunAsNonRoot(true).
		WithSeccompProfile(corev1ac.SeccompProfile().WithType(corev1.SeccompProfileTypeRuntimeDefault))
	if p != PlatformOpenShift {
		// The image's USER is the name "memcache", which the kubelet cannot
		// prove non-root; give the number.
		sc = sc.WithRunAsUser(memcachedUID).WithRunAsGroup(memcachedUID)
	}
	return sc
}

func containerSecurityContext() *corev1ac.SecurityContextApplyConfiguration {
	return corev1ac.SecurityContext().
		WithAllowPrivilegeEscalation(false).
		WithReadOnlyRootFilesystem(true).
		WithRunAsNonRoot(true).
		WithCapabilities(corev1ac.Capabilities().WithDrop(corev1.Capability("ALL")))
}
