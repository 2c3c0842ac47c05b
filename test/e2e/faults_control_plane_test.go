package e2e

import (
	"fmt"
	"math/rand/v2"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/example-inc/memcached-operator/hack/local-cluster/localcluster"
)

// restartCRs is the size of the rollout the API server and etcd restarts
// interrupt: enough that the outage falls mid-rollout.
var restartCRs = envInt("FAULT_RESTART_CRS", 24)

var _ = Describe("a control-plane component stopped and started mid-rollout", Label(labelHost, labelFaults, labelDisruptive), Serial, func() {
	DescribeTable("the same operator process recovers and converges",
		func(ctx SpecContext, component localcluster.Component) {
			ns := "restart-" + string(component)
			set := newMemcachedSet(ctx, ns, restartCRs)
			op := startOperator(ctx, ns, operatorConfig{Namespace: ns, Webhooks: true})
			pid := op.PID()
			rng := rand.New(rand.NewPCG(uint64(GinkgoRandomSeed()), uint64(len(component))))
			point := rng.IntN(len(set.names) / 2)

			start := time.Now()
			Expect(set.create(ctx)).To(BeZero(), "refused creates")
			Eventually(set.available).WithContext(ctx).WithTimeout(set.timeout()).
				WithPolling(100 * time.Millisecond).Should(BeNumerically(">=", point))
			available, err := set.available(ctx)
			Expect(err).NotTo(HaveOccurred())
			down := time.Now()
			Expect(cluster.local.StopComponent(component)).To(Succeed())
			stopped := time.Since(down)
			Expect(cluster.local.StartComponent(ctx, component)).To(Succeed())
			outage := time.Since(down)
			back := time.Now()

			By("converging without a restart of its own")
			// A Memcached created after the outage proves the operator's
			// watches came back, not only its retries of queued work.
			set.add(ctx, "after-outage", 2)
			set.waitConverged(ctx)
			Expect(op.Running()).To(BeTrue(), "the operator exited:\n%s", op.Tail(30))
			Expect(op.PID()).To(Equal(pid))
			AddReportEntry(string(component)+" restart", fmt.Sprintf(
				"%d Memcached; stopped %s after the first create with %d Available; stop took %s, down %s in all; "+
					"all converged (one more created after) %s after it was back; operator pid %d throughout",
				len(set.names), down.Sub(start).Round(time.Millisecond), available, stopped.Round(time.Millisecond),
				outage.Round(time.Millisecond), time.Since(back).Round(time.Millisecond), pid))
		},
		Entry("kube-apiserver", localcluster.APIServer, SpecTimeout(15*time.Minute)),
		Entry("etcd", localcluster.Etcd, SpecTimeout(15*time.Minute)),
	)
})
