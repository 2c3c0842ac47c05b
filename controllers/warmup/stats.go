package warmup

import (
	"bufio"
	"context"
	"fmt"
	"maps"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Stats are the counters of one memcached that warmth is judged by.
type Stats struct {
	// GetHits and GetMisses count gets since memcached started.
	GetHits, GetMisses uint64
	// Items is how many items it holds now.
	Items uint64
}

// maxStatsLines bounds what Read takes from a server: memcached 1.6
// answers stats with about 90 lines.
const maxStatsLines = 512

// Read asks the memcached at addr for its stats, within timeout.
func Read(ctx context.Context, addr string, timeout time.Duration) (Stats, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
	if err != nil {
		return Stats{}, err
	}
	defer func() { _ = conn.Close() }()
	deadline, _ := ctx.Deadline()
	if err := conn.SetDeadline(deadline); err != nil {
		return Stats{}, err
	}
	if _, err := conn.Write([]byte("stats\r\n")); err != nil {
		return Stats{}, err
	}
	var s Stats
	fields := map[string]*uint64{"get_hits": &s.GetHits, "get_misses": &s.GetMisses, "curr_items": &s.Items}
	sc := bufio.NewScanner(conn)
	for n := 0; sc.Scan() && n < maxStatsLines; n++ {
		line := sc.Text()
		if line == "END" {
			if len(fields) > 0 {
				return Stats{}, fmt.Errorf("memcached at %s: stats without %s", addr, strings.Join(slices.Sorted(maps.Keys(fields)), ", "))
			}
			return s, nil
		}
		parts := strings.Fields(line)
		if len(parts) != 3 || parts[0] != "STAT" {
			return Stats{}, fmt.Errorf("memcached at %s answered stats with %q", addr, line)
		}
		if p, ok := fields[parts[1]]; ok {
			if *p, err = strconv.ParseUint(parts[2], 10, 64); err != nil {
				return Stats{}, fmt.Errorf("memcached at %s: stat %s: %w", addr, parts[1], err)
			}
			delete(fields, parts[1])
		}
	}
	if err := sc.Err(); err != nil {
		return Stats{}, fmt.Errorf("memcached at %s: reading stats: %w", addr, err)
	}
	return Stats{}, fmt.Errorf("memcached at %s: stats did not end within %d lines", addr, maxStatsLines)
}
