package e2e

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// operatorRBACKinds are the objects of config/default that make up the
// operator's identity and rights.
var operatorRBACKinds = []string{"Namespace", "ServiceAccount", "Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding"}

// installOperatorRBAC creates config/default's namespace, ServiceAccount,
// roles and bindings as rendered, so the operator runs with what `make
// deploy` would give it and nothing more.
func installOperatorRBAC(ctx context.Context, objs []*unstructured.Unstructured) error {
	rbac := operatorRBACObjects(objs)
	if len(rbac) == 0 {
		return fmt.Errorf("config/default renders none of %v", operatorRBACKinds)
	}
	for _, u := range rbac {
		if err := k8s.Create(ctx, u); err != nil {
			return fmt.Errorf("creating %s %s: %w", u.GetObjectKind().GroupVersionKind().Kind, u.GetName(), err)
		}
	}
	return nil
}

// operatorRBACObjects are copies of the objects of objs of the kinds of
// operatorRBACKinds.
func operatorRBACObjects(objs []*unstructured.Unstructured) []client.Object {
	var out []client.Object
	for _, u := range objs {
		if slices.Contains(operatorRBACKinds, u.GetKind()) {
			out = append(out, u.DeepCopy())
		}
	}
	return out
}

// localWebhookRole is the test's one addition to the generated RBAC:
// --webhook-cert-mode=local (make run's mode, never used in a cluster)
// writes and deletes the webhook configurations itself, which in a
// cluster cert-manager or OLM do.
const localWebhookRole = "security-test-local-webhook-mode"

func grantLocalWebhookMode(ctx context.Context) error {
	cr := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: localWebhookRole},
		Rules: []rbacv1.PolicyRule{{
			APIGroups: []string{"admissionregistration.k8s.io"},
			Resources: []string{"mutatingwebhookconfigurations", "validatingwebhookconfigurations"},
			Verbs:     []string{"get", "create", "patch", "delete"},
		}},
	}
	if err := k8s.Create(ctx, cr); err != nil {
		return err
	}
	return bindClusterRole(ctx, localWebhookRole, localWebhookRole, operatorNamespace, operatorServiceAccount)
}

// bindClusterRole binds ClusterRole role to a ServiceAccount.
func bindClusterRole(ctx context.Context, name, role, ns, sa string) error {
	return k8s.Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: sa}},
	})
}

// createServiceAccount creates a ServiceAccount, and its namespace if
// missing.
func createServiceAccount(ctx context.Context, ns, name string) error {
	err := k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return k8s.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}})
}
