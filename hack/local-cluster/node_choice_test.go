package main

import "testing"

func TestChooseNode(t *testing.T) {
	root := hostFacts{goos: "linux", root: true, aptGet: true}
	with := func(f func(*hostFacts)) hostFacts { h := root; f(&h); return h }
	for _, tc := range []struct {
		name  string
		asked string
		host  hostFacts
		want  nodeChoice
	}{
		{"root on Linux", nodeAuto, root,
			nodeChoice{real: true, why: "running as root on Linux (LOCAL_CLUSTER_NODE=kwok gives fake pods instead)"}},
		{"packages missing, apt-get there to install them", nodeAuto, with(func(h *hostFacts) { h.missing = []string{"runc"} }),
			nodeChoice{real: true, why: "running as root on Linux (LOCAL_CLUSTER_NODE=kwok gives fake pods instead)"}},
		{"not root", nodeAuto, with(func(h *hostFacts) { h.root = false }),
			nodeChoice{why: "not root: the real node's kubelet and containerd need root (run make as root for memcached pods that serve)"}},
		{"not Linux", nodeAuto, with(func(h *hostFacts) { h.goos = "darwin" }),
			nodeChoice{why: "this is not Linux: the real node's kubelet, containerd and runc run on Linux only"}},
		{"packages missing, no apt-get", nodeAuto, with(func(h *hostFacts) { h.missing, h.aptGet = []string{"runc", "conntrack"}, false }),
			nodeChoice{why: "the real node's packages (runc conntrack) are not installed and there is no apt-get to install them"}},
		{"another cluster's real node", nodeAuto, with(func(h *hostFacts) { h.nodeHolder = "pid 42 dir /x" }),
			nodeChoice{why: "another local cluster's real node runs on this machine (pid 42 dir /x); there is one per machine"}},
		{"kwok asked", nodeKwok, root, nodeChoice{why: "LOCAL_CLUSTER_NODE=kwok"}},
		{"real asked, not root", nodeReal, with(func(h *hostFacts) { h.root = false }), nodeChoice{real: true, why: "LOCAL_CLUSTER_NODE=real"}},
		{"running with kwok, real asked", nodeReal, with(func(h *hostFacts) { h.running = nodeKwok }),
			nodeChoice{why: "the local cluster in /d runs already with this node (make local-cluster-down, then start it again, to choose anew)"}},
		{"running with the real node", nodeAuto, with(func(h *hostFacts) { h.running, h.nodeHolder = nodeReal, "pid 1 dir /d" }),
			nodeChoice{real: true, why: "the local cluster in /d runs already with this node (make local-cluster-down, then start it again, to choose anew)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got, err := chooseNode(tc.asked, "/d", tc.host); err != nil || got != tc.want {
				t.Errorf("chooseNode(%q) = %+v, %v; want %+v", tc.asked, got, err, tc.want)
			}
		})
	}
	if _, err := chooseNode("yes", "/d", root); err == nil || err.Error() != "LOCAL_CLUSTER_NODE must be auto, real or kwok, not 'yes'" {
		t.Errorf("an unknown node: %v", err)
	}
}
