package controllers

import (
	"encoding/json"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	"github.com/example-inc/memcached-operator/controllers/proxyenv"
)

// prunePatch returns a strategic merge patch that removes, from the
// containers the operator builds, the list entries that server-side apply
// cannot take back because a hand edit made them someone else's: ports the
// operator does not declare (an edited containerPort becomes a second port
// with the same name, which the API server rejects) and proxy variables the
// operator does not have (it owns those six names outright).
//
// owned is what the operator owns of live (its extract). Entries it owns are
// left to the apply, which drops them in the same write that changes the
// rest, so a proxy change is one rollout, not two. It returns nil when there
// is nothing to remove, which is the case on every ordinary reconcile.
func prunePatch(live *appsv1.Deployment, owned, want *appsv1ac.DeploymentApplyConfiguration) []byte {
	wanted := containersByName(want)
	ours := containersByName(owned)
	var containers []map[string]any
	for _, c := range live.Spec.Template.Spec.Containers {
		w, ok := wanted[c.Name]
		if !ok {
			continue
		}
		var ports, env []map[string]any
		o := ours[c.Name]
		for _, p := range c.Ports {
			if !hasPort(w.Ports, p.ContainerPort) && !hasPort(o.Ports, p.ContainerPort) {
				ports = append(ports, map[string]any{"containerPort": p.ContainerPort, "$patch": "delete"})
			}
		}
		for _, e := range c.Env {
			if proxyenv.IsManaged(e.Name) && !hasEnv(w.Env, e.Name) && !hasEnv(o.Env, e.Name) {
				env = append(env, map[string]any{"name": e.Name, "$patch": "delete"})
			}
		}
		if ports == nil && env == nil {
			continue
		}
		entry := map[string]any{"name": c.Name}
		if ports != nil {
			entry["ports"] = ports
		}
		if env != nil {
			entry["env"] = env
		}
		containers = append(containers, entry)
	}
	if containers == nil {
		return nil
	}
	patch, err := json.Marshal(map[string]any{
		"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"containers": containers}}},
	})
	if err != nil {
		// Only maps, strings and numbers go in; Marshal cannot fail on them.
		panic(err)
	}
	return patch
}

func containersByName(d *appsv1ac.DeploymentApplyConfiguration) map[string]corev1ac.ContainerApplyConfiguration {
	out := map[string]corev1ac.ContainerApplyConfiguration{}
	if d == nil || d.Spec == nil || d.Spec.Template == nil || d.Spec.Template.Spec == nil {
		return out
	}
	for _, c := range d.Spec.Template.Spec.Containers {
		if c.Name != nil {
			out[*c.Name] = c
		}
	}
	return out
}

func hasPort(ports []corev1ac.ContainerPortApplyConfiguration, port int32) bool {
	return slices.ContainsFunc(ports, func(p corev1ac.ContainerPortApplyConfiguration) bool {
		return p.ContainerPort != nil && *p.ContainerPort == port
	})
}

func hasEnv(env []corev1ac.EnvVarApplyConfiguration, name string) bool {
	return slices.ContainsFunc(env, func(e corev1ac.EnvVarApplyConfiguration) bool {
		return e.Name != nil && *e.Name == name
	})
}
