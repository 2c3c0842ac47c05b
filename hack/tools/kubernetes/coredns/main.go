// Command coredns is the local cluster's DNS server (make node builds it
// into the control plane's directory): CoreDNS, pinned by this module's
// go.mod, with only the plugins the cluster's Corefile uses. The stock
// build links every plugin CoreDNS has, cloud providers' SDKs included;
// these few keep the build that a cold CI pays for short, and leave out
// forward: nothing this server answers may come from off the machine.
package main

import (
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"

	// Each registers its directive in init.
	_ "github.com/coredns/coredns/plugin/bind"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/log"
	_ "github.com/coredns/coredns/plugin/ready"
)

func init() {
	// The order in which a query passes the plugins of a server block,
	// whatever the Corefile's order: CoreDNS's own (plugin.cfg), cut down
	// to the plugins linked above. A directive missing here is unknown to
	// the Corefile parser.
	dnsserver.Directives = []string{
		"bind",
		"ready",
		"errors",
		"log",
		"kubernetes",
	}
}

func main() {
	coremain.Run()
}
