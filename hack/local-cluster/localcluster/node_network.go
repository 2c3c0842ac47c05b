package localcluster

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// The pod network: a bridge the launcher creates before anything starts,
// which the CNI bridge plugin then attaches pods to. Its address is the
// pods' gateway, the address the API server listens on and advertises (so
// pods reach it through the kubernetes Service) and the node's InternalIP
// (so kube-proxy programs its rules). The Service range and the fake nodes'
// pod range are routed to the bridge: a ClusterIP that kube-proxy has no
// rule for, or the address kwok gave a pod, dies here instead of following
// the default route off the machine. (Not an unreachable route: the host's
// connect() would fail before kube-proxy's DNAT turns a ClusterIP into a pod
// address.)
const (
	bridgeName = "localcluster0"
	bridgeCIDR = "10.88.0.0/16"
	bridgeIP   = "10.88.0.1"
)

// forwardGuard is the iptables rule that keeps pods' traffic on the
// machine: the CNI bridge plugin turns on IP forwarding, and nothing a pod
// sends may be forwarded out of another interface.
var forwardGuard = []string{"FORWARD", "-i", bridgeName, "!", "-o", bridgeName,
	"-m", "comment", "--comment", "localcluster: pods stay on this machine", "-j", "DROP"}

// run runs a command and returns its error with its output.
func run(name string, args ...string) error {
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return nil
}

// networkUp creates the bridge with its address, routes the Service range
// to it and adds the forward guard.
func networkUp() error {
	for _, args := range [][]string{
		{"link", "add", bridgeName, "type", "bridge"},
		{"addr", "add", bridgeIP + "/16", "dev", bridgeName},
		{"link", "set", bridgeName, "up"},
		{"route", "add", serviceCIDR, "dev", bridgeName},
		{"route", "add", podCIDR, "dev", bridgeName},
	} {
		if err := run("ip", args...); err != nil {
			return err
		}
	}
	return run("iptables", append([]string{"-w", "-I"}, forwardGuard...)...)
}

// networkDown removes what networkUp made, whatever of it exists. Deleting
// the bridge deletes its address and the route through it.
func networkDown() error {
	var errs []error
	for run("iptables", append([]string{"-w", "-C"}, forwardGuard...)...) == nil {
		if err := run("iptables", append([]string{"-w", "-D"}, forwardGuard...)...); err != nil {
			errs = append(errs, err)
			break
		}
	}
	if _, err := os.Stat("/sys/class/net/" + bridgeName); err == nil {
		errs = append(errs, run("ip", "link", "del", bridgeName))
	}
	return errors.Join(errs...)
}

// removeKubeFirewall removes the KUBE-FIREWALL chain and the INPUT and
// OUTPUT jumps to it, in both IP families.
func removeKubeFirewall() error {
	var errs []error
	for _, tool := range []string{"iptables", "ip6tables"} {
		for _, chain := range []string{"INPUT", "OUTPUT"} {
			for run(tool, "-w", "-C", chain, "-j", "KUBE-FIREWALL") == nil {
				if err := run(tool, "-w", "-D", chain, "-j", "KUBE-FIREWALL"); err != nil {
					errs = append(errs, err)
					break
				}
			}
		}
		if run(tool, "-w", "-S", "KUBE-FIREWALL") == nil {
			errs = append(errs, run(tool, "-w", "-F", "KUBE-FIREWALL"), run(tool, "-w", "-X", "KUBE-FIREWALL"))
		}
	}
	return errors.Join(errs...)
}

// networkLeftovers lists what networkUp, kubelet and kube-proxy left of the
// network: the bridge, the Service and pod routes, the forward guard and any
// KUBE-* iptables chain of either family.
func networkLeftovers() ([]string, error) {
	var left []string
	if _, err := os.Stat("/sys/class/net/" + bridgeName); err == nil {
		left = append(left, "network interface "+bridgeName)
	}
	for _, cidr := range []string{serviceCIDR, podCIDR} {
		if out, err := exec.Command("ip", "route", "show", cidr).Output(); err == nil && len(bytes.TrimSpace(out)) > 0 {
			left = append(left, "route "+strings.TrimSpace(string(out)))
		}
	}
	if run("iptables", append([]string{"-w", "-C"}, forwardGuard...)...) == nil {
		left = append(left, "iptables rule "+strings.Join(forwardGuard, " "))
	}
	for _, tool := range []string{"iptables-save", "ip6tables-save"} {
		out, err := exec.Command(tool).Output()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", tool, err)
		}
		for _, l := range strings.Split(string(out), "\n") {
			if strings.Contains(l, "KUBE-") {
				left = append(left, tool+": "+l)
			}
		}
	}
	return left, nil
}
