package e2e

import (
	"cmp"
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/types"

	"github.com/example-inc/memcached-operator/test/framework/scrape"
)

// getMetrics GETs the operator's /metrics with token as bearer token ("" sends
// no Authorization header) and returns the status code and body.
func getMetrics(ctx context.Context, addr, token string) (int, string, error) {
	c := &http.Client{
		Timeout: 10 * time.Second,
		Transport: &http.Transport{
			// The metrics certificate is controller-runtime's self-signed
			// one, made at start: nothing to verify it against. What is
			// tested is who gets an answer, not the certificate.
			TLSClientConfig:   &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // see above
			DisableKeepAlives: true,
			Proxy:             nil,
		},
	}
	return scrape.Get(ctx, c, "https://"+addr+"/metrics", token)
}

// theMetricsEndpointSpecs are the "The metrics endpoint" specs of the security container (security_test.go).
func theMetricsEndpointSpecs() {
	Describe("The metrics endpoint", Ordered, func() {
		const (
			ns       = "metrics-scrapers"
			reader   = "prometheus"
			stranger = "stranger"
		)
		// tokens of the callers, by name.
		tokens := map[string]string{}

		BeforeAll(func(ctx SpecContext) {
			// reader gets config/rbac/metrics_reader_role.yaml's ClusterRole, as
			// installed from config/default; stranger gets nothing.
			for _, sa := range []string{reader, stranger} {
				Expect(createServiceAccount(ctx, ns, sa)).To(Succeed())
			}
			Expect(bindClusterRole(ctx, "metrics-scraper-prometheus", metricsReaderRole, ns, reader)).To(Succeed())
			for _, sa := range []string{reader, stranger} {
				t, err := cluster.local.ServiceAccountToken(ctx, ns, sa)
				Expect(err).NotTo(HaveOccurred())
				tokens[sa] = t
			}
			// Not a token the API server issued.
			tokens["forged"] = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzeXN0ZW06YWRtaW4ifQ.c2lnbmF0dXJl"
		})

		DescribeTable("answers",
			func(ctx SpecContext, caller string, want types.GomegaMatcher) {
				var got int
				// Eventually: the RBAC binding reaches the API server's
				// authorizer within moments, not at once.
				Eventually(func(g Gomega) {
					code, body, err := getMetrics(ctx, op.MetricsAddr(), tokens[caller])
					g.Expect(err).NotTo(HaveOccurred())
					got = code
					g.Expect(code).To(want, "body: %.300s", body)
					if code == http.StatusOK {
						g.Expect(body).To(ContainSubstring("controller_runtime_reconcile_total"))
					}
				}).WithContext(ctx).WithTimeout(readyTimeout).WithPolling(time.Second).Should(Succeed())
				AddReportEntry("GET /metrics with token of "+cmp.Or(caller, "nobody"), got)
			},
			Entry("401 without a token", "", Equal(http.StatusUnauthorized)),
			// The TokenReview of a token the API server cannot parse comes back
			// unauthenticated, with an error in its status: still a refused
			// token, not a failed review (controller-runtime's filter answered
			// 500).
			Entry("401 with a token the API server did not issue", "forged", Equal(http.StatusUnauthorized)),
			Entry("403 to a ServiceAccount without the metrics-reader role", stranger, Equal(http.StatusForbidden)),
			Entry("200 to a ServiceAccount with the metrics-reader role", reader, Equal(http.StatusOK)),
		)

		// Enough forged tokens at once that, if each cost a TokenReview, they
		// would wait behind the client's 50 QPS for longer than a review's 10 s
		// timeout (1,024 / 50 QPS = 20 s), as they did before the gate bounded
		// them.
		It("keeps answering the reader through a flood of forged tokens", func(ctx SpecContext) {
			const forged, atOnce = 2048, 1024
			code, _, err := getMetrics(ctx, op.MetricsAddr(), tokens[reader])
			Expect(err).NotTo(HaveOccurred())
			Expect(code).To(Equal(http.StatusOK))

			start := time.Now()
			codes := make(chan int, forged)
			next := make(chan int)
			var flood sync.WaitGroup
			for range atOnce {
				flood.Go(func() {
					for i := range next {
						code, _, err := getMetrics(ctx, op.MetricsAddr(), fmt.Sprintf("forged-%d", i))
						if err != nil {
							code = -1
						}
						codes <- code
					}
				})
			}
			go func() {
				defer close(next)
				for i := range forged {
					next <- i
				}
			}()
			floodDone := make(chan struct{})
			go func() { flood.Wait(); close(floodDone) }()

			// The reader scrapes for as long as the flood lasts.
			var readerScrapes int
			var slowest time.Duration
			for flooding := true; flooding; {
				select {
				case <-floodDone:
					flooding = false
				default:
				}
				t := time.Now()
				code, body, err := getMetrics(ctx, op.MetricsAddr(), tokens[reader])
				Expect(err).NotTo(HaveOccurred())
				Expect(code).To(Equal(http.StatusOK), "scrape %d, %s into the flood: %.300s", readerScrapes+1, time.Since(start), body)
				readerScrapes++
				slowest = max(slowest, time.Since(t))
			}
			close(codes)
			got := map[int]int{}
			for code := range codes {
				got[code]++
			}
			Expect(got).To(HaveLen(2), "forged tokens get 401 or, past the reviews under way, 429: %v", got)
			Expect(got[http.StatusUnauthorized] + got[http.StatusTooManyRequests]).To(Equal(forged))
			Expect(op.Running()).To(BeTrue())
			AddReportEntry("metrics under a flood of forged tokens", fmt.Sprintf(
				"%d forged (%d at once) in %s: %d x 401, %d x 429; the reader scraped %d times, all 200, slowest %s",
				forged, atOnce, time.Since(start).Round(time.Millisecond), got[http.StatusUnauthorized], got[http.StatusTooManyRequests],
				readerScrapes, slowest.Round(time.Millisecond)))
		}, SpecTimeout(3*time.Minute))
	})
}
