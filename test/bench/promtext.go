package main

import (
	"bufio"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// sample is one line of the Prometheus text format.
type sample struct {
	name   string
	labels map[string]string
	value  float64
}

// metrics is a scrape of a /metrics endpoint in the Prometheus text format,
// which both kube-apiserver and controller-runtime serve. A hand parser keeps
// the bench free of a direct dependency the operator does not have.
type metrics []sample

func parseMetrics(text string) (metrics, error) {
	var out metrics
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		s, err := parseSample(line)
		if err != nil {
			return nil, fmt.Errorf("metrics line %q: %w", line, err)
		}
		out = append(out, s)
	}
	return out, sc.Err()
}

// parseSample reads `name{k="v",...} value [timestamp]`.
func parseSample(line string) (sample, error) {
	s := sample{labels: map[string]string{}}
	i := strings.IndexAny(line, "{ ")
	if i < 0 {
		return s, fmt.Errorf("no value")
	}
	s.name, line = line[:i], line[i:]
	if strings.HasPrefix(line, "{") {
		line = line[1:]
		for {
			line = strings.TrimLeft(line, ", ")
			if strings.HasPrefix(line, "}") {
				line = line[1:]
				break
			}
			eq := strings.Index(line, "=\"")
			if eq < 0 {
				return s, fmt.Errorf("malformed labels")
			}
			key := line[:eq]
			line = line[eq+2:]
			var val strings.Builder
			closed := false
			for j := 0; j < len(line); j++ {
				switch c := line[j]; {
				case c == '\\' && j+1 < len(line):
					j++
					switch line[j] {
					case 'n':
						val.WriteByte('\n')
					default:
						val.WriteByte(line[j])
					}
				case c == '"':
					line, closed = line[j+1:], true
				default:
					val.WriteByte(c)
				}
				if closed {
					break
				}
			}
			if !closed {
				return s, fmt.Errorf("unterminated label value")
			}
			s.labels[key] = val.String()
		}
	}
	fields := strings.Fields(line)
	if len(fields) == 0 {
		return s, fmt.Errorf("no value")
	}
	v, err := strconv.ParseFloat(fields[0], 64)
	if err != nil {
		return s, err
	}
	s.value = v
	return s, nil
}

// matches reports whether s carries every label in want.
func (s sample) matches(want map[string]string) bool {
	for k, v := range want {
		if s.labels[k] != v {
			return false
		}
	}
	return true
}

// sum adds up every sample of name that carries the labels in want.
func (m metrics) sum(name string, want map[string]string) float64 {
	total := 0.0
	for _, s := range m {
		if s.name == name && s.matches(want) {
			total += s.value
		}
	}
	return total
}

// clientRequestsByMethod is client-go's rest_client_requests_total by HTTP
// method: every request the process's clients sent.
func (m metrics) clientRequestsByMethod() map[string]float64 {
	out := map[string]float64{}
	for _, s := range m {
		if s.name == "rest_client_requests_total" {
			out[s.labels["method"]] += s.value
		}
	}
	return out
}

// labelValues lists the distinct values of label on the samples of name.
func (m metrics) labelValues(name, label string) []string {
	var out []string
	for _, s := range m {
		if v, ok := s.labels[label]; ok && s.name == name && !slices.Contains(out, v) {
			out = append(out, v)
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

// histogram returns the cumulative buckets of histogram name (without the
// _bucket suffix), summed over every series carrying the labels in want,
// sorted by bound.
func (m metrics) histogram(name string, want map[string]string) []bucket {
	byLE := map[float64]float64{}
	for _, s := range m {
		if s.name != name+"_bucket" || !s.matches(want) {
			continue
		}
		le, err := strconv.ParseFloat(s.labels["le"], 64)
		if err != nil {
			continue
		}
		byLE[le] += s.value
	}
	out := make([]bucket, 0, len(byLE))
	for le, c := range byLE {
		out = append(out, bucket{le: le, count: c})
	}
	slices.SortFunc(out, func(a, b bucket) int {
		switch {
		case a.le < b.le:
			return -1
		case a.le > b.le:
			return 1
		}
		return 0
	})
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
