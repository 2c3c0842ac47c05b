package e2e

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/example-inc/memcached-operator/api/v1/gen"
	"github.com/example-inc/memcached-operator/test/framework/scrape"
)

// leaseName is the operator's LeaderElectionID (cmd/manager/app/manager.go).
const leaseName = "memcached-operator.cache.example.com"

var _ = Describe("two replicas with leader election", Label(labelHost, labelFaults), func() {
	It("hands over to the standby when the leader is killed, and only the leader ever reconciles", func(ctx SpecContext) {
		const ns = "leader"
		cluster.namespace(ctx, ns, nil)
		// No webhooks: in local mode each replica would point the
		// cluster's webhook configurations at itself, and the killed one's
		// would refuse the creates this spec makes. In a cluster both sit
		// behind one Service.
		cfg := operatorConfig{Namespace: ns, LeaderElect: true}
		lease := func(ctx context.Context) *coordinationv1.Lease {
			l := &coordinationv1.Lease{}
			Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: leaseName}, l)).To(Succeed())
			return l
		}

		By("starting replica a alone, so it is the leader")
		a := startOperator(ctx, "leader-a", cfg)
		Eventually(a.leads).WithContext(ctx).WithTimeout(time.Minute).Should(BeTrue())
		first := lease(ctx)
		leaderA := ptr.Deref(first.Spec.HolderIdentity, "")
		Expect(leaderA).NotTo(BeEmpty())

		By("starting replica b, which waits")
		b := startOperator(ctx, "leader-b", cfg)
		Expect(k8s.Create(ctx, fakeMemcached(ns, "before", gen.WithSize(2)))).To(Succeed())
		waitDeployment(ctx, ns, "before")
		// The counter moves when the reconcile returns, just after its write.
		Eventually(a.Reconciles).WithContext(ctx).WithTimeout(30 * time.Second).Should(BeNumerically(">", 0))
		// The standby's memcached controller has not started: no
		// reconcile, so no write, while the leader lives. Sampled over the
		// leader's work above and some lease renewals (every 2 s) after it.
		Consistently(func(g Gomega) {
			g.Expect(b.Reconciles(ctx)).To(BeZero())
			g.Expect(b.leads(ctx)).To(BeFalse())
			g.Expect(ptr.Deref(lease(ctx).Spec.HolderIdentity, "")).To(Equal(leaderA))
		}).WithContext(ctx).WithTimeout(6 * time.Second).WithPolling(250 * time.Millisecond).Should(Succeed())

		By("killing the leader")
		// The last look at the standby before the kill: it has still made
		// no reconcile, so there is no moment with two acting.
		Expect(b.Reconciles(ctx)).To(BeZero())
		killed := time.Now()
		a.kill()
		Expect(k8s.Create(ctx, fakeMemcached(ns, "after", gen.WithSize(2)))).To(Succeed())

		var leaderB string
		Eventually(func(g Gomega) {
			leaderB = ptr.Deref(lease(ctx).Spec.HolderIdentity, "")
			g.Expect(leaderB).NotTo(BeEmpty())
			g.Expect(leaderB).NotTo(Equal(leaderA))
		}).WithContext(ctx).WithTimeout(2 * time.Minute).WithPolling(100 * time.Millisecond).Should(Succeed())
		leaseTaken := time.Since(killed)
		waitDeployment(ctx, ns, "after")
		acting := time.Since(killed)

		Expect(b.leads(ctx)).To(BeTrue())
		Eventually(b.Reconciles).WithContext(ctx).WithTimeout(30 * time.Second).Should(BeNumerically(">", 0))
		after := lease(ctx)
		Expect(ptr.Deref(after.Spec.LeaseTransitions, 0)).To(Equal(ptr.Deref(first.Spec.LeaseTransitions, 0) + 1))
		// Each replica took the lease once: b's log holds one acquisition,
		// and it came after the kill (the lease itself shows that: b's
		// holder identity replaced a's only now).
		log, err := os.ReadFile(b.LogPath())
		Expect(err).NotTo(HaveOccurred())
		Expect(strings.Count(string(log), "Successfully acquired lease")).To(Equal(1))

		AddReportEntry("leader failover", fmt.Sprintf(
			"lease duration %ds; kill -9 of the leader -> lease held by the standby %s later, "+
				"-> the standby had created a Memcached's Deployment %s later; standby reconciles before the kill: 0",
			ptr.Deref(after.Spec.LeaseDurationSeconds, 0), leaseTaken.Round(time.Millisecond), acting.Round(time.Millisecond)))
	}, SpecTimeout(10*time.Minute))
})

// leads reports whether the operator holds the lease, by its own
// leader_election_master_status gauge.
func (o *operator) leads(ctx context.Context) (bool, error) {
	text, err := o.Metrics(ctx)
	if err != nil {
		return false, err
	}
	m, err := scrape.Parse(text)
	if err != nil {
		return false, err
	}
	return m.Sum("leader_election_master_status", map[string]string{"name": leaseName}) == 1, nil
}

// waitDeployment waits until the operator has created a Memcached's
// Deployment.
func waitDeployment(ctx context.Context, ns, name string) {
	Eventually(func() error {
		return k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &appsv1.Deployment{})
	}).WithContext(ctx).WithTimeout(2 * time.Minute).WithPolling(100 * time.Millisecond).Should(Succeed())
}
