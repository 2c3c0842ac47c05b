package servedcert

import (
	"context"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/log"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
	"github.com/example-inc/memcached-operator/certs/memcachedtls"
	"github.com/example-inc/memcached-operator/controllers/operand"
)

// Options configure a Watcher.
type Options struct {
	// Interval is the time between the starts of two rounds.
	Interval time.Duration
	// Timeout bounds the question to one pod.
	Timeout time.Duration
	// Port is the sidecar's health port; operand.HealthPort when 0.
	Port int
}

// Watcher asks the pods of every Memcached that serves TLS which
// certificate they serve, one round each interval, and keeps what it found.
// It runs as a manager's Runnable, on the leader only.
type Watcher struct {
	reader  client.Reader
	opts    Options
	http    *http.Client
	now     func() time.Time
	changes chan event.GenericEvent
	// expiring holds, for each pod found expiring, the end of its
	// certificate: memcached_operator_served_certificate_expiring_timestamp_seconds.
	expiring *prometheus.GaugeVec

	mu      sync.Mutex
	reports map[types.NamespacedName]Report
}

// NewWatcher returns a Watcher that reads Memcached objects and pods from
// reader (the manager's cache). Register it as a prometheus.Collector for
// its metric.
func NewWatcher(reader client.Reader, o Options) *Watcher {
	if o.Port == 0 {
		o.Port = operand.HealthPort
	}
	return &Watcher{
		reader: reader,
		opts:   o,
		// Pod IPs, never through the cluster proxy; one question per pod
		// per round, so no idle connection is kept to thousands of pods.
		http: &http.Client{Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}},
		now:  time.Now,
		// Rounds send at most one event per Memcached whose report changed.
		changes: make(chan event.GenericEvent, 128),
		expiring: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: "memcached_operator",
			Name:      "served_certificate_expiring_timestamp_seconds",
			Help: "The end (Unix seconds) of the TLS certificate a memcached pod serves, for each pod whose " +
				"certificate has less than a quarter of its lifetime left or has ended.",
		}, []string{"namespace", "name", "pod"}),
		reports: map[types.NamespacedName]Report{},
	}
}

// Changes carries a Memcached (name and namespace only) each time its
// report changes.
func (w *Watcher) Changes() <-chan event.GenericEvent { return w.changes }

// Report is what the last round found of mc's pods; false when it found
// nothing (no round yet, no TLS, no pod answered).
func (w *Watcher) Report(mc types.NamespacedName) (Report, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	r, ok := w.reports[mc]
	return r, ok
}

// Describe implements prometheus.Collector.
func (w *Watcher) Describe(ch chan<- *prometheus.Desc) { w.expiring.Describe(ch) }

// Collect implements prometheus.Collector.
func (w *Watcher) Collect(ch chan<- prometheus.Metric) { w.expiring.Collect(ch) }

// Start runs a round at once and then every interval until ctx ends.
func (w *Watcher) Start(ctx context.Context) error {
	ticker := time.NewTicker(w.opts.Interval)
	defer ticker.Stop()
	for {
		if err := w.round(ctx); err != nil && ctx.Err() == nil {
			log.FromContext(ctx).WithName("served-certificates").Error(err, "listing Memcached objects and pods")
		}
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		}
	}
}

// round asks every pod of every Memcached that serves TLS, then publishes
// what changed.
func (w *Watcher) round(ctx context.Context) error {
	// Read only: the cache's objects themselves, not copies of a
	// thousand Memcached objects and their pods every round.
	readOnly := client.UnsafeDisableDeepCopy
	var list cachev1.MemcachedList
	if err := w.reader.List(ctx, &list, readOnly); err != nil {
		return err
	}
	found := map[types.NamespacedName]Report{}
	for i := range list.Items {
		mc := &list.Items[i]
		if mc.Spec.TLS == nil {
			continue
		}
		var pods corev1.PodList
		if err := w.reader.List(ctx, &pods, client.InNamespace(mc.Namespace), client.MatchingLabels(operand.SelectorLabels(mc.Name)), readOnly); err != nil {
			return err
		}
		if r := w.check(ctx, pods.Items); r.Answered > 0 {
			found[client.ObjectKeyFromObject(mc)] = r
		}
	}
	w.publish(found)
	return ctx.Err()
}

// check asks each running pod of pods which certificate it serves.
func (w *Watcher) check(ctx context.Context, pods []corev1.Pod) Report {
	var r Report
	for _, p := range pods {
		if p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodRunning || p.Status.PodIP == "" {
			continue
		}
		qctx, cancel := context.WithTimeout(ctx, w.opts.Timeout)
		s, err := memcachedtls.ReadServed(qctx, w.http, net.JoinHostPort(p.Status.PodIP, strconv.Itoa(w.opts.Port)))
		cancel()
		if err != nil {
			log.FromContext(ctx).V(1).Info("a pod did not say which certificate it serves", "pod", p.Namespace+"/"+p.Name, "error", err.Error())
			continue
		}
		r.Answered++
		now := w.now()
		if Near(s, now) {
			r.Expiring = append(r.Expiring, Expiring{Pod: p.Name, NotAfter: s.NotAfter, Expired: !now.Before(s.NotAfter)})
		}
	}
	slices.SortFunc(r.Expiring, func(a, b Expiring) int {
		if c := a.NotAfter.Compare(b.NotAfter); c != 0 {
			return c
		}
		return strings.Compare(a.Pod, b.Pod)
	})
	return r
}

// publish stores found, sets the metric's series, and sends an event for
// each Memcached whose report changed. A series that stays is set before
// those that go are removed, so no scrape sees an expiring pod vanish and
// come back.
func (w *Watcher) publish(found map[types.NamespacedName]Report) {
	w.mu.Lock()
	old := w.reports
	w.reports = found
	w.mu.Unlock()

	for mc, r := range found {
		for _, e := range r.Expiring {
			w.expiring.WithLabelValues(mc.Namespace, mc.Name, e.Pod).Set(float64(e.NotAfter.Unix()))
		}
	}
	for mc, r := range old {
		for _, e := range r.Expiring {
			if !slices.ContainsFunc(found[mc].Expiring, func(n Expiring) bool { return n.Pod == e.Pod }) {
				w.expiring.DeleteLabelValues(mc.Namespace, mc.Name, e.Pod)
			}
		}
	}
	for _, mc := range changed(old, found) {
		obj := &cachev1.Memcached{}
		obj.Name, obj.Namespace = mc.Name, mc.Namespace
		w.changes <- event.GenericEvent{Object: obj}
	}
}

// changed lists the Memcached objects whose report differs between old
// and found.
func changed(old, found map[types.NamespacedName]Report) []types.NamespacedName {
	var out []types.NamespacedName
	for mc, r := range found {
		if o, ok := old[mc]; !ok || !equalReports(o, r) {
			out = append(out, mc)
		}
	}
	for mc := range old {
		if _, ok := found[mc]; !ok {
			out = append(out, mc)
		}
	}
	return out
}

// equalReports compares what the status says of a report: which pods
// expire, when, and whether they have; not how many pods answered.
func equalReports(a, b Report) bool {
	return slices.EqualFunc(a.Expiring, b.Expiring, func(x, y Expiring) bool {
		return x.Pod == y.Pod && x.NotAfter.Equal(y.NotAfter) && x.Expired == y.Expired
	})
}
