package olm

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/example-inc/memcached-operator/certs"
	"github.com/example-inc/memcached-operator/test/framework/operatorproc"
	"github.com/example-inc/memcached-operator/test/framework/secretvolume"
)

// managerContainerName is the operator's container in the CSV's Deployment.
const managerContainerName = "manager"

func managerContainer(d *appsv1.Deployment) (*corev1.Container, error) {
	for i := range d.Spec.Template.Spec.Containers {
		if c := &d.Spec.Template.Spec.Containers[i]; c.Name == managerContainerName {
			return c, nil
		}
	}
	return nil, fmt.Errorf("deployment %s has no %s container", d.Name, managerContainerName)
}

var metadataFieldRef = regexp.MustCompile(`^metadata\.(annotations|labels)\['([^']+)'\]$`)

// containerEnv is the environment kubelet would give container c of a pod
// of d: plain values as they are, and the downward-API references OLM's
// Deployment uses (WATCH_NAMESPACE is metadata.annotations
// ['olm.targetNamespaces']) resolved against the pod template, whose
// annotations and labels every pod carries. Any other source is an error
// rather than a silently missing variable.
func containerEnv(d *appsv1.Deployment, c *corev1.Container) ([]string, error) {
	meta := d.Spec.Template.ObjectMeta
	env := make([]string, 0, len(c.Env))
	for _, e := range c.Env {
		switch {
		case e.ValueFrom == nil:
			env = append(env, e.Name+"="+e.Value)
		case e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.namespace":
			env = append(env, e.Name+"="+d.Namespace)
		case e.ValueFrom.FieldRef != nil && metadataFieldRef.MatchString(e.ValueFrom.FieldRef.FieldPath):
			m := metadataFieldRef.FindStringSubmatch(e.ValueFrom.FieldRef.FieldPath)
			values := meta.Annotations
			if m[1] == "labels" {
				values = meta.Labels
			}
			env = append(env, e.Name+"="+values[m[2]])
		default:
			return nil, fmt.Errorf("env %s: source %+v is not resolved by this suite", e.Name, e.ValueFrom)
		}
	}
	return env, nil
}

// mountSecretVolume writes the Secret volume that container c of d mounts
// at mountPath to the same path under root, as kubelet does: only the
// volume's items, under their paths (OLM's webhook-cert volume maps tls.crt
// and tls.key), or every key when it lists none. It returns the host
// directory.
func mountSecretVolume(ctx context.Context, k client.Client, d *appsv1.Deployment, c *corev1.Container, mountPath, root string) (string, error) {
	i := slices.IndexFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return m.MountPath == mountPath })
	if i < 0 {
		return "", fmt.Errorf("container %s mounts nothing at %s", c.Name, mountPath)
	}
	mount := c.VolumeMounts[i]
	j := slices.IndexFunc(d.Spec.Template.Spec.Volumes, func(v corev1.Volume) bool { return v.Name == mount.Name })
	if j < 0 || d.Spec.Template.Spec.Volumes[j].Secret == nil {
		return "", fmt.Errorf("volume %s mounted at %s is not a Secret volume", mount.Name, mountPath)
	}
	src := d.Spec.Template.Spec.Volumes[j].Secret
	secret := &corev1.Secret{}
	if err := k.Get(ctx, client.ObjectKey{Namespace: d.Namespace, Name: src.SecretName}, secret); err != nil {
		return "", err
	}
	files := secret.Data
	if len(src.Items) > 0 {
		files = map[string][]byte{}
		for _, item := range src.Items {
			v, ok := secret.Data[item.Key]
			if !ok {
				return "", fmt.Errorf("Secret %s has no key %s", secret.Name, item.Key)
			}
			files[item.Path] = v
		}
	}
	dir := filepath.Join(root, mountPath)
	return dir, secretvolume.Write(dir, files)
}

// startHostOperator runs binary with the manager container's arguments and
// environment from d, as its ServiceAccount, with OLM's certificate Secret
// written where the container mounts it. Only what cannot be the same on a
// shared host changes, each by a flag the launcher appends after the
// container's own (the last one wins): the three listening ports, the
// certificate directory (the mount path, under a work directory) and the
// leader election namespace (a pod's own, which a process outside one must
// be given). dir receives its kubeconfig and certificate; logPath, shared by
// restarts, its output. It returns once the operator is ready.
func startHostOperator(ctx context.Context, k client.Client, d *appsv1.Deployment, binary, dir, logPath string) (*operatorproc.Operator, error) {
	c, err := managerContainer(d)
	if err != nil {
		return nil, err
	}
	env, err := containerEnv(d, c)
	if err != nil {
		return nil, err
	}
	certDir, err := mountSecretVolume(ctx, k, d, c, certs.DefaultMountedDir, filepath.Join(dir, "root"))
	if err != nil {
		return nil, err
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := cluster.WriteServiceAccountKubeconfig(ctx, kubeconfig, d.Namespace, d.Spec.Template.Spec.ServiceAccountName); err != nil {
		return nil, err
	}
	return operatorproc.Start(ctx, operatorproc.Options{
		Binary:                  binary,
		Kubeconfig:              kubeconfig,
		LogPath:                 logPath,
		Webhooks:                operatorproc.WebhooksMounted,
		WebhookCertDir:          certDir,
		SecureMetrics:           true,
		LeaderElectionNamespace: d.Namespace,
		// The container's WATCH_NAMESPACE comes from OLM's annotation,
		// resolved into env.
		WatchNamespace: envValue(env, "WATCH_NAMESPACE"),
		Env:            env,
		Args:           c.Args,
	})
}

// envValue is the value of name in env (NAME=value entries), the last one
// winning as in exec.
func envValue(env []string, name string) string {
	v := ""
	for _, kv := range env {
		if n, val, ok := strings.Cut(kv, "="); ok && n == name {
			v = val
		}
	}
	return v
}
