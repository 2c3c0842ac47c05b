package certs

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// olmCSVKind is the kind of OLM's ClusterServiceVersion, the owner OLM gives
// the certificate Secret it makes.
const olmCSVKind = "ClusterServiceVersion"

// OLMSecretOptions say where the manager runs and where its webhook
// certificate is mounted.
type OLMSecretOptions struct {
	// Reader reads the pod, its owners and the Secret: the manager's API
	// reader, as its cache holds none of them (and may not list Secrets).
	Reader client.Reader
	// Writer patches the Secret.
	Writer client.Writer
	// PodNamespace and PodName are the manager's pod (downward API).
	PodNamespace, PodName string
	// MountPath is where the pod mounts the webhook certificate.
	MountPath string
	Log       logr.Logger
}

// OLMSecretKeeper is a manager.Runnable that runs KeepOLMSecret once at
// start, retrying for a minute; failing, it logs and lets the manager run:
// the certificate serves either way, only the next upgrade would rotate it.
type OLMSecretKeeper struct{ Options OLMSecretOptions }

// Start implements manager.Runnable.
func (k OLMSecretKeeper) Start(ctx context.Context) error {
	var last error
	err := wait.ExponentialBackoffWithContext(ctx, wait.Backoff{Duration: time.Second, Factor: 2, Steps: 6, Cap: 20 * time.Second},
		func(ctx context.Context) (bool, error) {
			last = KeepOLMSecret(ctx, k.Options)
			return last == nil, nil
		})
	if err != nil && ctx.Err() == nil {
		k.Options.Log.Error(errors.Join(err, last), "could not make the Deployment an owner of OLM's webhook certificate Secret; "+
			"OLM will issue a new CA after the next upgrade, and admission fails until the new operator pod is ready")
	}
	return nil
}

// NeedLeaderElection is false: every replica serves with the Secret.
func (OLMSecretKeeper) NeedLeaderElection() bool { return false }

// KeepOLMSecret makes the operator's Deployment an owner of the Secret
// mounted at MountPath, when OLM made that Secret. The rules it needs (get
// and patch on that one Secret, get on ReplicaSets) are in the bundle only:
// config/manifests/olm_role.yaml.
//
// OLM v0 owns the webhook certificate Secret by the CSV that created it. An
// upgrade's CSV reuses the Secret without becoming its owner, so when OLM
// deletes the old CSV the garbage collector deletes the Secret, and the new
// CSV, finding none, issues a new CA: it puts the new CA into the webhook
// configurations at once, while the running operator pod still serves the
// old certificate, and every admission call fails ("certificate signed by
// unknown authority") until a pod with the new one is ready. The Deployment
// keeps its name and UID across upgrades and goes with the install, so as a
// second owner it keeps the Secret, and its CA, exactly as long as the
// install.
func KeepOLMSecret(ctx context.Context, o OLMSecretOptions) error {
	pod := &corev1.Pod{}
	if err := o.Reader.Get(ctx, client.ObjectKey{Namespace: o.PodNamespace, Name: o.PodName}, pod); err != nil {
		return fmt.Errorf("reading the operator's pod: %w", err)
	}
	secretName, err := mountedSecret(pod, o.MountPath)
	if err != nil {
		return err
	}
	secret := &corev1.Secret{}
	if err := o.Reader.Get(ctx, client.ObjectKey{Namespace: pod.Namespace, Name: secretName}, secret); err != nil {
		return fmt.Errorf("reading the webhook certificate Secret: %w", err)
	}
	if !slices.ContainsFunc(secret.OwnerReferences, func(r metav1.OwnerReference) bool { return r.Kind == olmCSVKind }) {
		o.Log.V(1).Info("the webhook certificate Secret is not OLM's; leaving it as it is", "secret", secretName)
		return nil
	}
	deployment, err := podDeployment(ctx, o.Reader, pod)
	if err != nil {
		return err
	}
	if slices.ContainsFunc(secret.OwnerReferences, func(r metav1.OwnerReference) bool { return r.UID == deployment.UID }) {
		return nil
	}
	before := secret.DeepCopy()
	secret.OwnerReferences = append(secret.OwnerReferences, metav1.OwnerReference{
		APIVersion: appsv1.SchemeGroupVersion.String(), Kind: "Deployment", Name: deployment.Name, UID: deployment.UID,
	})
	// The optimistic lock keeps an owner OLM adds meanwhile: the patch
	// carries the whole list.
	if err := o.Writer.Patch(ctx, secret, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("adding Deployment %s as an owner of Secret %s: %w", deployment.Name, secretName, err)
	}
	o.Log.Info("made the Deployment an owner of OLM's webhook certificate Secret, so that upgrades keep its CA",
		"secret", secretName, "deployment", deployment.Name)
	return nil
}

// mountedSecret is the Secret whose volume pod mounts at path.
func mountedSecret(pod *corev1.Pod, path string) (string, error) {
	for _, c := range pod.Spec.Containers {
		for _, m := range c.VolumeMounts {
			if m.MountPath != path {
				continue
			}
			for _, v := range pod.Spec.Volumes {
				if v.Name == m.Name && v.Secret != nil {
					return v.Secret.SecretName, nil
				}
			}
		}
	}
	return "", fmt.Errorf("pod %s mounts no Secret at %s", pod.Name, path)
}

// podDeployment is the Deployment whose ReplicaSet controls pod.
func podDeployment(ctx context.Context, c client.Reader, pod *corev1.Pod) (*appsv1.Deployment, error) {
	rsRef := metav1.GetControllerOf(pod)
	if rsRef == nil || rsRef.Kind != "ReplicaSet" {
		return nil, fmt.Errorf("pod %s is not controlled by a ReplicaSet", pod.Name)
	}
	rs := &appsv1.ReplicaSet{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: pod.Namespace, Name: rsRef.Name}, rs); err != nil {
		return nil, fmt.Errorf("reading the pod's ReplicaSet: %w", err)
	}
	dRef := metav1.GetControllerOf(rs)
	if dRef == nil || dRef.Kind != "Deployment" {
		return nil, fmt.Errorf("ReplicaSet %s is not controlled by a Deployment", rs.Name)
	}
	d := &appsv1.Deployment{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: pod.Namespace, Name: dRef.Name}, d); err != nil {
		return nil, fmt.Errorf("reading the pod's Deployment: %w", err)
	}
	return d, nil
}
