package main

import (
	"cmp"
	"math"
	"slices"

	"github.com/example-inc/memcached-operator/test/framework/scrape"
)

// metrics is a scrape of a /metrics endpoint, kube-apiserver's or the
// operator's, with what the bench reads beyond sums.
type metrics struct{ scrape.Metrics }

func parseMetrics(text string) (metrics, error) {
	m, err := scrape.Parse(text)
	return metrics{m}, err
}

// clientRequestsByMethod is client-go's rest_client_requests_total by HTTP
// method: every request the process's clients sent.
func (m metrics) clientRequestsByMethod() map[string]float64 {
	out := map[string]float64{}
	for s := range m.Series("rest_client_requests_total", nil) {
		for _, l := range s.GetLabel() {
			if l.GetName() == "method" {
				out[l.GetValue()] += scrape.Value(s)
			}
		}
	}
	return out
}

// labelValues lists the distinct values of label on the series of name.
func (m metrics) labelValues(name, label string) []string {
	var out []string
	for s := range m.Series(name, nil) {
		for _, l := range s.GetLabel() {
			if l.GetName() == label && !slices.Contains(out, l.GetValue()) {
				out = append(out, l.GetValue())
			}
		}
	}
	slices.Sort(out)
	return out
}

// bucket is one cumulative histogram bucket: count observations <= le.
type bucket struct {
	le    float64
	count float64
}

// histogram returns the cumulative buckets of histogram name, +Inf
// included, summed over every series carrying the labels in want, sorted by
// bound.
func (m metrics) histogram(name string, want map[string]string) []bucket {
	byLE := map[float64]float64{}
	for s := range m.Series(name, want) {
		for _, b := range s.GetHistogram().GetBucket() {
			// The parser keeps a count in exactly one of the two fields.
			byLE[b.GetUpperBound()] += float64(b.GetCumulativeCount()) + b.GetCumulativeCountFloat()
		}
	}
	out := make([]bucket, 0, len(byLE))
	for le, c := range byLE {
		out = append(out, bucket{le: le, count: c})
	}
	slices.SortFunc(out, func(a, b bucket) int { return cmp.Compare(a.le, b.le) })
	return out
}

// histogramDelta is after - before, bucket by bucket: the observations made
// between two scrapes. Buckets missing from before count as zero.
func histogramDelta(before, after []bucket) []bucket {
	prev := map[float64]float64{}
	for _, b := range before {
		prev[b.le] = b.count
	}
	out := make([]bucket, len(after))
	for i, b := range after {
		out[i] = bucket{le: b.le, count: b.count - prev[b.le]}
	}
	return out
}

// total is the number of observations: the +Inf bucket's count.
func total(buckets []bucket) float64 {
	if len(buckets) == 0 {
		return 0
	}
	return buckets[len(buckets)-1].count
}

// quantile estimates the q-quantile as Prometheus's histogram_quantile does:
// it finds the bucket holding the rank and interpolates linearly inside it,
// taking 0 as the lower bound of the first bucket. A rank in the +Inf bucket
// gives the largest finite bound. It also returns the upper bound of the
// bucket holding the rank, which is all a histogram really knows. NaN when
// there are no observations.
func quantile(q float64, buckets []bucket) (estimate, upperBound float64) {
	n := total(buckets)
	if n == 0 {
		return math.NaN(), math.NaN()
	}
	rank := q * n
	lowerLE, lowerCount := 0.0, 0.0
	for _, b := range buckets {
		if b.count >= rank {
			if math.IsInf(b.le, 1) {
				return lowerLE, b.le
			}
			if b.count == lowerCount {
				return b.le, b.le
			}
			return lowerLE + (b.le-lowerLE)*(rank-lowerCount)/(b.count-lowerCount), b.le
		}
		lowerLE, lowerCount = b.le, b.count
	}
	return lowerLE, math.Inf(1)
}

// fractionAtMost is the share of observations known to be <= le: those in
// the largest bucket bounded by le. Exact when le is a bucket bound, an
// underestimate otherwise.
func fractionAtMost(le float64, buckets []bucket) float64 {
	n := total(buckets)
	if n == 0 {
		return math.NaN()
	}
	within := 0.0
	for _, b := range buckets {
		if b.le <= le {
			within = b.count
		}
	}
	return within / n
}
