package olm

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/example-inc/memcached-operator/certs"
	"github.com/example-inc/memcached-operator/test/operatorproc"
	"github.com/example-inc/memcached-operator/test/secretvolume"
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

// serviceAccountKubeconfig writes a kubeconfig that authenticates as the
// ServiceAccount sa with a bound token, so the operator on the host has
// exactly the permissions OLM granted its pod, no more.
func serviceAccountKubeconfig(ctx context.Context, k client.Client, cfg *rest.Config, namespace, sa, path string) error {
	account := &corev1.ServiceAccount{}
	if err := k.Get(ctx, client.ObjectKey{Namespace: namespace, Name: sa}, account); err != nil {
		return err
	}
	req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}
	if err := k.SubResource("token").Create(ctx, account, req); err != nil {
		return fmt.Errorf("token for ServiceAccount %s/%s: %w", namespace, sa, err)
	}
	kc := clientcmdapi.NewConfig()
	kc.Clusters["olm"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos[sa] = &clientcmdapi.AuthInfo{Token: req.Status.Token}
	kc.Contexts["olm"] = &clientcmdapi.Context{Cluster: "olm", AuthInfo: sa, Namespace: namespace}
	kc.CurrentContext = "olm"
	return clientcmd.WriteToFile(*kc, path)
}

// hostOperator is the operator binary run on the host as OLM's pod would
// run it.
type hostOperator struct {
	proc                    *operatorproc.Process
	webhookPort, probePort  int
	certDir, kubeconfigPath string
}

// startHostOperator runs binary with the manager container's arguments and
// environment from d, as its ServiceAccount, with OLM's certificate Secret
// written where the container mounts it. Only what cannot be the same on a
// shared host changes, each by a flag appended after the container's own
// (the last one wins): the three listening ports, the certificate
// directory (the mount path, under a work directory) and the leader
// election namespace (a pod's own, which a process outside one must be
// given). dir receives its kubeconfig and certificate; logPath, shared by
// restarts, its output. It returns once /readyz, which waits for the webhook server,
// answers.
func startHostOperator(ctx context.Context, k client.Client, cfg *rest.Config, d *appsv1.Deployment, binary, dir, logPath string) (*hostOperator, error) {
	c, err := managerContainer(d)
	if err != nil {
		return nil, err
	}
	env, err := containerEnv(d, c)
	if err != nil {
		return nil, err
	}
	op := &hostOperator{kubeconfigPath: filepath.Join(dir, "kubeconfig")}
	if op.certDir, err = mountSecretVolume(ctx, k, d, c, certs.DefaultMountedDir, filepath.Join(dir, "root")); err != nil {
		return nil, err
	}
	if err := serviceAccountKubeconfig(ctx, k, cfg, d.Namespace, d.Spec.Template.Spec.ServiceAccountName, op.kubeconfigPath); err != nil {
		return nil, err
	}
	ports, err := operatorproc.FreePorts(3)
	if err != nil {
		return nil, err
	}
	op.webhookPort, op.probePort = ports[0], ports[1]
	args := append(slices.Clone(c.Args),
		"--webhook-cert-mode="+string(certs.ModeMounted),
		"--webhook-cert-dir="+op.certDir,
		"--webhook-port="+strconv.Itoa(op.webhookPort),
		"--health-probe-bind-address=127.0.0.1:"+strconv.Itoa(op.probePort),
		"--metrics-bind-address=127.0.0.1:"+strconv.Itoa(ports[2]),
		"--leader-election-namespace="+d.Namespace,
	)
	op.proc, err = operatorproc.Start(operatorproc.Options{
		Binary: binary, Kubeconfig: op.kubeconfigPath, LogPath: logPath, Args: args, Env: env,
	})
	if err != nil {
		return nil, err
	}
	readyCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if err := op.proc.WaitHTTP(readyCtx, fmt.Sprintf("http://127.0.0.1:%d/readyz", op.probePort)); err != nil {
		_ = op.proc.Kill()
		return nil, err
	}
	return op, nil
}
