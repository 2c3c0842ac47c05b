package olm

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/example-inc/memcached-operator/test/framework/webhookroute"
)

// olmOwnerLabel marks the objects OLM made for a CSV.
const olmOwnerLabel = "olm.owner"

// csvWebhooks are the webhook configurations OLM made for a CSV.
func csvWebhooks(ctx context.Context, csv string) (webhookroute.Webhooks, error) {
	return webhookroute.List(ctx, k8s, client.MatchingLabels{olmOwnerLabel: csv})
}

// routeToHost routes the API server's calls to the CSV's webhooks (OLM's
// Service <deployment>-service) to the operator on this host at port. What
// it changes, and why the API server still verifies OLM's certificate for
// <service>.<namespace>.svc, is in package webhookroute; olm-operator must
// be stopped first, as it owns both objects and would put them back.
func routeToHost(ctx context.Context, csv string, port int) (*webhookroute.Route, error) {
	hooks, err := csvWebhooks(ctx, csv)
	if err != nil {
		return nil, err
	}
	return webhookroute.ToHost(ctx, k8s, hooks, port)
}
