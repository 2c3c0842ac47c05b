package main

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"

	"github.com/example-inc/memcached-operator/hack/local-cluster/localcluster"
)

// nodeChoice is the node that runs the cluster's pods, and why.
type nodeChoice struct {
	real bool
	why  string
}

// kind is the node's name in the state directory and in make's recipes.
func (c nodeChoice) kind() string {
	if c.real {
		return nodeReal
	}
	return nodeKwok
}

// line is what up prints about the node: which, what that means for the
// pods, and why.
func (c nodeChoice) line() string {
	if c.real {
		return "node: real (kubelet, containerd, runc), so memcached pods really serve: " + c.why
	}
	return "node: kwok's fake node, so pods are Ready but run nothing: " + c.why
}

const (
	nodeAuto = "auto"
	nodeReal = "real"
	nodeKwok = "kwok"
)

// hostFacts are what the choice reads from the machine.
type hostFacts struct {
	goos string
	root bool
	// running is the node kind of the cluster that runs in the directory,
	// empty when none does.
	running string
	// missing are the real node's Debian packages that are not installed.
	missing []string
	aptGet  bool
	// nodeHolder names another cluster's real node that holds the machine.
	nodeHolder string
}

// chooseNode picks the node for a cluster in dir. asked is auto, real or
// kwok; auto gives the real node wherever it can run: a person who runs make
// run and then connects to a memcached pod should find memcached, not a pod
// that kwok only marked Ready. It cannot run off Linux, without root,
// without its Debian packages or apt to install them, or while another
// cluster's real node holds the machine (there is one per machine); kwok's
// fake node then runs the pods, and the reason says what to change.
func chooseNode(asked, dir string, h hostFacts) (nodeChoice, error) {
	if h.running != "" {
		return nodeChoice{real: h.running == nodeReal, why: "the local cluster in " + dir +
			" runs already with this node (make local-cluster-down, then start it again, to choose anew)"}, nil
	}
	switch asked {
	case nodeReal, nodeKwok:
		return nodeChoice{real: asked == nodeReal, why: "LOCAL_CLUSTER_NODE=" + asked}, nil
	case nodeAuto:
	default:
		return nodeChoice{}, fmt.Errorf("LOCAL_CLUSTER_NODE must be auto, real or kwok, not '%s'", asked)
	}
	switch {
	case h.goos != "linux":
		return nodeChoice{why: "this is not Linux: the real node's kubelet, containerd and runc run on Linux only"}, nil
	case !h.root:
		return nodeChoice{why: "not root: the real node's kubelet and containerd need root (run make as root for memcached pods that serve)"}, nil
	case len(h.missing) > 0 && !h.aptGet:
		return nodeChoice{why: fmt.Sprintf("the real node's packages (%s) are not installed and there is no apt-get to install them",
			strings.Join(h.missing, " "))}, nil
	case h.nodeHolder != "":
		return nodeChoice{why: "another local cluster's real node runs on this machine (" + h.nodeHolder + "); there is one per machine"}, nil
	}
	return nodeChoice{real: true, why: "running as root on Linux (LOCAL_CLUSTER_NODE=kwok gives fake pods instead)"}, nil
}

// readHostFacts reads this machine's facts for a cluster in dir whose real
// node needs packages.
func readHostFacts(dir string, packages []string) (hostFacts, error) {
	h := hostFacts{goos: runtime.GOOS, root: os.Geteuid() == 0}
	if _, alive := running(dir); alive {
		kind, err := os.ReadFile(nodeKindPath(dir))
		if err == nil {
			h.running = strings.TrimSpace(string(kind))
		}
	}
	for _, pkg := range packages {
		out, err := exec.Command("dpkg-query", "-W", "-f=${Status}", pkg).Output()
		if err != nil || !strings.Contains(string(out), "install ok installed") {
			h.missing = append(h.missing, pkg)
		}
	}
	_, err := exec.LookPath("apt-get")
	h.aptGet = err == nil
	lock, err := localcluster.ReadNodeLock()
	h.nodeHolder = lock.Holder
	return h, err
}

// choose is the node for the cluster o asks for, on this machine.
func choose(o options) (nodeChoice, error) {
	h, err := readHostFacts(o.dir, o.packages)
	if err != nil {
		return nodeChoice{}, err
	}
	return chooseNode(o.node, o.dir, h)
}

// printNode prints the choice as make's recipes read it: the kind, a space,
// and why.
func printNode(o options) error {
	c, err := choose(o)
	if err != nil {
		return err
	}
	fmt.Println(c.kind(), c.why)
	return nil
}
