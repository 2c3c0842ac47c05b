package e2e

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/example-inc/memcached-operator/test/framework/webhookroute"
)

// csvWebhooks are the webhook configurations OLM made for the install's CSV
// of version: labelled with the CSV's name and namespace.
func csvWebhooks(ctx context.Context, in install, version string) (webhookroute.Webhooks, error) {
	return webhookroute.List(ctx, k8s, client.MatchingLabels{
		"olm.owner": csvName(version), "olm.owner.namespace": in.namespace,
	})
}

// namespaceSelectors are every webhook's namespaceSelector, by webhook name
// (OLM scopes a namespaced install's webhooks to its OperatorGroup with it).
func namespaceSelectors(w webhookroute.Webhooks) map[string]*metav1.LabelSelector {
	out := map[string]*metav1.LabelSelector{}
	for _, c := range w.Mutating {
		for _, h := range c.Webhooks {
			out[h.Name] = h.NamespaceSelector
		}
	}
	for _, c := range w.Validating {
		for _, h := range c.Webhooks {
			out[h.Name] = h.NamespaceSelector
		}
	}
	return out
}
