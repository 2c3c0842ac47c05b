package proxyenv

import (
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/operator-framework/operator-lib/proxy"
	"golang.org/x/net/http/httpproxy"
	corev1 "k8s.io/api/core/v1"
)

// managedNames are the six variable names this package owns in a container's
// env: operator-lib's upper-case names and their lower-case twins, which many
// tools (curl, wget, Go's net/http) read instead.
var managedNames = func() []string {
	names := make([]string, 0, 2*len(proxy.ProxyEnvNames))
	for _, n := range proxy.ProxyEnvNames {
		names = append(names, n, strings.ToLower(n))
	}
	return names
}()

// IsManaged reports whether name is one of the proxy variables this package
// adds, changes and removes.
func IsManaged(name string) bool {
	return slices.Contains(managedNames, name)
}

// FromEnvironment reads the proxy variables of the running process with
// operator-lib and drops those set to an empty string: a Subscription unsets
// the proxy by setting the variable empty, and an empty HTTP_PROXY in a pod
// means "no proxy" anyway.
func FromEnvironment() []corev1.EnvVar {
	return nonEmpty(proxy.ReadProxyVarsFromEnv())
}

func nonEmpty(vars []corev1.EnvVar) []corev1.EnvVar {
	out := make([]corev1.EnvVar, 0, len(vars))
	for _, v := range vars {
		if v.Value != "" && v.ValueFrom == nil {
			out = append(out, v)
		}
	}
	return out
}

// Merge returns env with every managed proxy variable replaced by proxyVars.
//
// Entries that are not proxy variables keep their order; the proxy variables
// follow them in proxyVars' order, so calling Merge again with the same input
// yields the same list and a Deployment built from it never rolls out for
// nothing. Managed names missing from proxyVars are removed, which is how a
// proxy unset on the cluster leaves the operands. Entries of proxyVars that
// are not managed names or have empty values are ignored, so a caller cannot
// smuggle other variables in through it.
func Merge(env, proxyVars []corev1.EnvVar) []corev1.EnvVar {
	out := make([]corev1.EnvVar, 0, len(env)+len(proxyVars))
	for _, e := range env {
		if !IsManaged(e.Name) {
			out = append(out, e)
		}
	}
	seen := make(map[string]bool, len(managedNames))
	for _, p := range nonEmpty(proxyVars) {
		if IsManaged(p.Name) && !seen[p.Name] {
			seen[p.Name] = true
			out = append(out, corev1.EnvVar{Name: p.Name, Value: p.Value})
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// Redact returns value with a URL's userinfo (user name and password)
// replaced by "REDACTED", so a proxy setting can be logged. NO_PROXY lists and plain host:port values pass
// through unchanged; a value that cannot be parsed is hidden whole rather than
// risk printing a secret.
func Redact(value string) string {
	if !strings.Contains(value, "@") {
		return value
	}
	u, err := url.Parse(value)
	if err != nil || u.User == nil {
		// "user:pw@host:3128" without a scheme does not parse as a URL with
		// userinfo; never print it.
		return "REDACTED"
	}
	u.User = url.User("REDACTED")
	return u.String()
}

// ClientProxy is the proxy of an API client (rest.Config.Proxy) as the
// process environment names it now. client-go's default,
// http.ProxyFromEnvironment, reads the environment at its first use and
// keeps that for the life of the process; under OLM the first use is the
// manager reading its Subscription, whose proxy variables it then sets, so
// with the default the manager's clients would ignore them until OLM's
// second rollout replaced the pod.
func ClientProxy() func(*http.Request) (*url.URL, error) {
	proxyFor := httpproxy.FromEnvironment().ProxyFunc()
	return func(req *http.Request) (*url.URL, error) { return proxyFor(req.URL) }
}
