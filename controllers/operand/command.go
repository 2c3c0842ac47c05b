package operand

import (
	"fmt"
	"strconv"
	"strings"
)

// Port is the TCP port memcached listens on.
const Port = 11211

// Command is the memcached command line for s.
//
// Long options with "=" only: memcached's getopt takes "-m=64" as the value
// "=64", which atoi reads as 0 MiB, and memcached refuses to start.
//
// Options equal to memcached's own defaults are left out, so a Memcached
// that keeps the defaults gets the command line it had before the spec had
// these fields: upgrading the operator does not restart its pods.
// --memory-limit is always given, as it always was.
func Command(s Settings) []string {
	cmd := []string{
		"memcached",
		"--port=" + strconv.Itoa(Port),
		"--memory-limit=" + strconv.FormatInt(s.MemoryMiB, 10),
		"--extended=modern",
		"--verbose",
	}
	if s.MaxItemSize != DefaultMaxItemSize {
		cmd = append(cmd, "--max-item-size="+strconv.FormatInt(s.MaxItemSize, 10))
	}
	if s.MaxConnections != DefaultMaxConnections {
		cmd = append(cmd, "--conn-limit="+strconv.FormatInt(s.MaxConnections, 10))
	}
	if s.Threads != DefaultThreads {
		cmd = append(cmd, "--threads="+strconv.FormatInt(s.Threads, 10))
	}
	if s.TLS != nil {
		cmd = append(cmd, s.TLS.args()...)
	}
	return cmd
}

// ParseCommand reads the settings back from a memcached command line, the
// way memcached reads its long options: a missing option keeps memcached's
// default, --max-item-size takes a k or m suffix, and options that do not
// set one of the four settings are skipped. It exists to check Command
// against an independent reading.
func ParseCommand(args []string) (Settings, error) {
	s := DefaultSettings()
	if len(args) == 0 || args[0] != "memcached" {
		return s, fmt.Errorf("not a memcached command line: %q", args)
	}
	for _, arg := range args[1:] {
		if !strings.HasPrefix(arg, "--") {
			return s, fmt.Errorf("option %q: want --name or --name=value", arg)
		}
		name, value, _ := strings.Cut(arg, "=")
		var err error
		switch name {
		case "--memory-limit":
			s.MemoryMiB, err = strconv.ParseInt(value, 10, 64)
		case "--max-item-size":
			s.MaxItemSize, err = parseSize(value)
		case "--conn-limit":
			s.MaxConnections, err = strconv.ParseInt(value, 10, 64)
		case "--threads":
			s.Threads, err = strconv.ParseInt(value, 10, 64)
		}
		if err != nil {
			return s, fmt.Errorf("option %s: %w", name, err)
		}
	}
	return s, nil
}

// parseSize reads a byte count with memcached's optional k or m suffix.
func parseSize(v string) (int64, error) {
	mult := int64(1)
	switch {
	case strings.HasSuffix(v, "k"), strings.HasSuffix(v, "K"):
		mult, v = kib, v[:len(v)-1]
	case strings.HasSuffix(v, "m"), strings.HasSuffix(v, "M"):
		mult, v = mib, v[:len(v)-1]
	}
	n, err := strconv.ParseInt(v, 10, 64)
	return n * mult, err
}
