package operatorproc

import (
	"context"

	"github.com/example-inc/memcached-operator/test/framework/scrape"
)

// Reconciles is controller_runtime_reconcile_total of the Memcached
// controller over every result, from plain-HTTP metrics; 0 while the
// controller has not started (a standby replica never starts it).
func (o *Operator) Reconciles(ctx context.Context) (float64, error) {
	text, err := o.Metrics(ctx)
	if err != nil {
		return 0, err
	}
	m, err := scrape.Parse(text)
	if err != nil {
		return 0, err
	}
	return m.Sum("controller_runtime_reconcile_total", map[string]string{"controller": "memcached"}), nil
}
