package certs_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/example-inc/memcached-operator/api/v1/gen"
	"github.com/example-inc/memcached-operator/certs"
)

// The objects an OLM install makes, as far as KeepOLMSecret reads them: a
// Deployment, its ReplicaSet, the manager pod mounting the certificate
// Secret, and the Secret owned by a CSV. envtest runs no garbage collector
// and no controllers, so owners may be made up.
func TestKeepOLMSecret(t *testing.T) {
	g := NewWithT(t)
	c, err := client.New(startAPIServer(t, &envtest.Environment{}), client.Options{})
	g.Expect(err).NotTo(HaveOccurred())
	ctx := context.Background()

	const ns, dir = "default", certs.DefaultMountedDir
	d := gen.ManagerDeployment(ns, "manager", map[string]string{"app": "manager"})
	g.Expect(c.Create(ctx, d)).To(Succeed())
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "manager-1", OwnerReferences: []metav1.OwnerReference{{
			APIVersion: "apps/v1", Kind: "Deployment", Name: d.Name, UID: d.UID, Controller: ptr.To(true),
		}}},
		Spec: appsv1.ReplicaSetSpec{Selector: d.Spec.Selector, Template: d.Spec.Template},
	}
	g.Expect(c.Create(ctx, rs)).To(Succeed())
	csvOwner := metav1.OwnerReference{
		APIVersion: "operators.coreos.com/v1alpha1", Kind: "ClusterServiceVersion", Name: "memcached-operator.v0.1.0", UID: types.UID("csv-uid"),
	}
	pod := func(name, secret string, owner *metav1.OwnerReference) *corev1.Pod {
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: corev1.PodSpec{
				Containers: []corev1.Container{{Name: "manager", Image: "manager",
					VolumeMounts: []corev1.VolumeMount{{Name: "cert", MountPath: dir}}}},
				Volumes: []corev1.Volume{{Name: "cert", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: secret}}}},
			},
		}
		if owner != nil {
			p.OwnerReferences = []metav1.OwnerReference{*owner}
		}
		g.Expect(c.Create(ctx, p)).To(Succeed())
		return p
	}
	secret := func(name string, owners ...metav1.OwnerReference) *corev1.Secret {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, OwnerReferences: owners},
			Data: map[string][]byte{"tls.crt": []byte("cert"), "tls.key": []byte("key")}}
		g.Expect(c.Create(ctx, s)).To(Succeed())
		return s
	}
	rsOwner := &metav1.OwnerReference{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs.Name, UID: rs.UID, Controller: ptr.To(true)}
	keepAt := func(p *corev1.Pod, mountPath string) error {
		return certs.KeepOLMSecret(ctx, certs.OLMSecretOptions{
			Reader: c, Writer: c, PodNamespace: ns, PodName: p.Name, MountPath: mountPath, Log: ctrl.Log,
		})
	}
	keep := func(p *corev1.Pod) error { return keepAt(p, dir) }
	owners := func(s *corev1.Secret) ([]metav1.OwnerReference, string) {
		got := &corev1.Secret{}
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(s), got)).To(Succeed())
		return got.OwnerReferences, got.ResourceVersion
	}

	// OLM's Secret gets the Deployment as a second owner, once.
	{
		s := secret("olm-cert", csvOwner)
		p := pod("olm", s.Name, rsOwner)
		g.Expect(keep(p)).To(Succeed())
		refs, rv := owners(s)
		g.Expect(refs).To(ConsistOf(csvOwner,
			metav1.OwnerReference{APIVersion: "apps/v1", Kind: "Deployment", Name: d.Name, UID: d.UID}))
		g.Expect(keep(p)).To(Succeed())
		_, again := owners(s)
		g.Expect(again).To(Equal(rv), "a second run writes nothing")
	}
	// a Secret OLM did not make (cert-manager's) is left alone.
	{
		s := secret("cert-manager-cert")
		g.Expect(keep(pod("cert-manager", s.Name, rsOwner))).To(Succeed())
		refs, _ := owners(s)
		g.Expect(refs).To(BeEmpty())
	}
	// a pod no ReplicaSet controls is an error.
	g.Expect(keep(pod("bare", secret("bare-cert", csvOwner).Name, nil))).To(MatchError(ContainSubstring("not controlled by a ReplicaSet")))
	// a pod mounting no Secret there is an error.
	g.Expect(keepAt(pod("no-mount", "x", rsOwner), "/elsewhere")).To(MatchError(ContainSubstring("mounts no Secret at /elsewhere")))
}
