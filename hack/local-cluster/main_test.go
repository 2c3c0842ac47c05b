package main

import "testing"

func TestExitStatus(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want int
	}{
		{nil, 2},
		{[]string{"start"}, 2},
		{[]string{"status", "--dir", dir, "extra"}, 2},
		{[]string{"status", "--dir", dir}, 3},
		// An image for a node that runs none, refused before anything
		// starts.
		{[]string{"up", "--dir", dir, "--node", "kwok", "--image", "operator.tar"}, 1},
		{[]string{"run", "--dir", dir, "--image", "operator.tar"}, 1},
	} {
		if got := runCommand(tc.args); got != tc.want {
			t.Errorf("local-cluster %q exits %d, want %d", tc.args, got, tc.want)
		}
	}
}
