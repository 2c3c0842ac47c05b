package certstest

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
)

// lowestPort is the bottom of the range ports are picked from: above the
// well-known and most registered service ports.
const lowestPort = 10000

// FreePorts returns n distinct TCP ports that are free on 127.0.0.1.
//
// The ports come from below the kernel's ephemeral range when there is room:
// a port picked there can only be taken by a program that binds it
// explicitly, whereas one from the ephemeral range can be handed to any
// outgoing connection (several clusters on one machine make plenty) in the
// seconds before the component binds it. All listeners are held until every
// port is chosen, so no port is returned twice.
func FreePorts(n int) (ports []int, err error) {
	listeners := make([]net.Listener, 0, n)
	defer func() {
		for _, l := range listeners {
			err = errors.Join(err, l.Close())
		}
	}()
	lo, hi := portRange()
	for attempts := 0; len(ports) < n; attempts++ {
		if attempts > 100*n {
			return nil, fmt.Errorf("no free port found on 127.0.0.1 in %d-%d", lo, hi)
		}
		port := 0 // let the kernel choose, from the ephemeral range
		if hi > lo {
			port = lo + rand.IntN(hi-lo+1)
		}
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			if port == 0 {
				return nil, err
			}
			continue // taken; try another
		}
		listeners = append(listeners, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// portRange returns the ports below the ephemeral range, or 0, 0 when that
// cannot be known or leaves no room.
func portRange() (lo, hi int) {
	data, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 0, 0
	}
	fields := strings.Fields(string(data))
	if len(fields) != 2 {
		return 0, 0
	}
	ephemeralLow, err := strconv.Atoi(fields[0])
	if err != nil || ephemeralLow-1 < lowestPort+1000 {
		return 0, 0
	}
	return lowestPort, ephemeralLow - 1
}
