package memcache

import (
	"fmt"
	"strings"
)

// StatsSettings is the answer to "stats settings": maxbytes,
// item_size_max, maxconns, num_threads, tcpport and the rest, by name.
func (c *Client) StatsSettings() (map[string]string, error) {
	return c.stats("stats settings")
}

// Stats is the answer to "stats": the counters memcached keeps since it
// started (cmd_get, cmd_set, get_hits, get_misses, curr_items, ...), by
// name.
func (c *Client) Stats() (map[string]string, error) {
	return c.stats("stats")
}

func (c *Client) stats(command string) (map[string]string, error) {
	if err := c.send("%s\r\n", command); err != nil {
		return nil, err
	}
	out := map[string]string{}
	for {
		l, err := c.line()
		if err != nil {
			return nil, err
		}
		if l == "END" {
			return out, nil
		}
		f := strings.SplitN(l, " ", 3)
		if len(f) != 3 || f[0] != "STAT" {
			return nil, fmt.Errorf("memcache: %s: %q", command, l)
		}
		out[f[1]] = f[2]
	}
}
