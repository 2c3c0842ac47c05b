package e2e

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("kill -9 of the operator during a rollout", Label(labelHost, labelFaults), func() {
	It("converges every Memcached with exactly its own objects after repeated kills and restarts", func(ctx SpecContext) {
		const ns = "crash"
		set := newMemcachedSet(ctx, ns, crashCRs)
		op := startOperator(ctx, "crash", operatorConfig{Namespace: ns, Webhooks: true})

		// Kill points are drawn as numbers of Available Memcached objects,
		// not as times, so that every kill lands inside the rollout however
		// fast or slow this machine is today; the seed reproduces them.
		rng := rand.New(rand.NewPCG(uint64(GinkgoRandomSeed()), 9))
		points := make([]int, crashKills)
		for i := range points {
			points[i] = rng.IntN(len(set.names))
		}
		slices.Sort(points)

		start := time.Now()
		created := set.createInBackground(ctx)
		var kills []string
		for i, point := range points {
			Eventually(set.available).WithContext(ctx).WithTimeout(set.timeout()).
				WithPolling(100 * time.Millisecond).Should(BeNumerically(">=", point))
			// A random delay of up to 250 ms after the point is reached,
			// so the kill does not always follow a status write: this is
			// the fault's timing, not a wait for anything.
			time.Sleep(time.Duration(rng.Int64N(int64(250 * time.Millisecond))))
			available, err := set.available(ctx)
			Expect(err).NotTo(HaveOccurred())
			killedAt := time.Since(start)
			op.kill()
			restart := time.Now()
			op.restart(ctx)
			kills = append(kills, fmt.Sprintf("kill %d at %s with %d/%d Available, ready again in %s",
				i+1, killedAt.Round(time.Millisecond), available, len(set.names), time.Since(restart).Round(time.Millisecond)))
		}
		Eventually(created).WithContext(ctx).WithTimeout(set.timeout()).Should(Receive(Succeed()))
		set.waitConverged(ctx)
		Expect(op.Running()).To(BeTrue(), "the last operator exited:\n%s", op.Tail(30))
		// A restart picks up where the killed operator was: nothing it finds
		// half-done is an error (docs/reliability.md says so).
		log, err := os.ReadFile(op.LogPath())
		Expect(err).NotTo(HaveOccurred())
		for _, line := range strings.Split(string(log), "\n") {
			Expect(line).NotTo(ContainSubstring(`"level":"error"`), "an error in the operator's log across the kills")
		}

		AddReportEntry("crash rollout", fmt.Sprintf("%d Memcached (%d pods), %d kills (seed %d):\n%s\nall converged %s after the first create",
			len(set.names), set.pods(), len(points), GinkgoRandomSeed(), strings.Join(kills, "\n"), time.Since(start).Round(time.Millisecond)))
	}, SpecTimeout(30*time.Minute))
})
