package localcluster

import "testing"

func TestPodsMayBeOf(t *testing.T) {
	for _, tc := range []struct {
		name, lock string
		want       bool
	}{
		{name: "no lock file or a released lock", lock: "", want: true},
		{name: "the lock names this cluster's node", lock: "pid 42 dir /tmp/a\n", want: true},
		{name: "the lock names it with a trailing slash", lock: "pid 42 dir /tmp/a/\n", want: true},
		{name: "the lock names another cluster's node", lock: "pid 42 dir /tmp/b\n", want: false},
		{name: "the lock names a cluster in a directory below", lock: "pid 42 dir /tmp/a/b\n", want: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := podsMayBeOf([]byte(tc.lock), "/tmp/a"); got != tc.want {
				t.Errorf("podsMayBeOf(%q, /tmp/a) = %v, want %v", tc.lock, got, tc.want)
			}
		})
	}
}
