package proxyenv

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

func env(kv ...string) []corev1.EnvVar {
	var out []corev1.EnvVar
	for i := 0; i < len(kv); i += 2 {
		out = append(out, corev1.EnvVar{Name: kv[i], Value: kv[i+1]})
	}
	return out
}

func TestMerge(t *testing.T) {
	tests := []struct {
		name  string
		env   []corev1.EnvVar
		proxy []corev1.EnvVar
		want  []corev1.EnvVar
	}{
		{name: "nothing", want: nil},
		{"adds upper and lower case after other entries", env("A", "1"),
			env("HTTP_PROXY", "http://p:3128", "http_proxy", "http://p:3128"), env("A", "1", "HTTP_PROXY", "http://p:3128", "http_proxy", "http://p:3128")},
		{"changes a value in place of the stale one", env("HTTP_PROXY", "http://old:3128", "A", "1"),
			env("HTTP_PROXY", "http://new:3128"), env("A", "1", "HTTP_PROXY", "http://new:3128")},
		{"removes every managed name when the proxy is unset", env("no_proxy", "x", "A", "1", "HTTPS_PROXY", "y", "B", "2"),
			nil, env("A", "1", "B", "2")},
		{"drops duplicates so a repeated merge never appends", env("NO_PROXY", ".svc", "NO_PROXY", ".svc"),
			env("NO_PROXY", ".svc", "NO_PROXY", ".other"), env("NO_PROXY", ".svc")},
		{"ignores names it does not manage and empty values", env("A", "1"),
			env("LD_PRELOAD", "/evil.so", "HTTPS_PROXY", "", "https_proxy", "http://p"), env("A", "1", "https_proxy", "http://p")},
		{"is case-sensitive: Http_Proxy is someone else's", env("Http_Proxy", "x"), env("HTTP_PROXY", "y"), env("Http_Proxy", "x", "HTTP_PROXY", "y")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Merge(tt.env, tt.proxy)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Fatalf("Merge() mismatch (-want +got):\n%s", diff)
			}
			if again := Merge(got, tt.proxy); !cmp.Equal(got, again) {
				t.Fatalf("Merge is not idempotent: %v then %v", got, again)
			}
		})
	}
}

func TestFromEnvironment(t *testing.T) {
	t.Setenv("HTTP_PROXY", "http://u:pw@proxy:3128")
	t.Setenv("HTTPS_PROXY", "")
	t.Setenv("NO_PROXY", ".cluster.local")
	want := env(
		"HTTP_PROXY", "http://u:pw@proxy:3128", "http_proxy", "http://u:pw@proxy:3128",
		"NO_PROXY", ".cluster.local", "no_proxy", ".cluster.local",
	)
	if diff := cmp.Diff(want, FromEnvironment()); diff != "" {
		t.Fatalf("FromEnvironment() mismatch (-want +got):\n%s", diff)
	}
}

func TestRedact(t *testing.T) {
	tests := map[string]string{
		"http://user:s3cret@proxy:3128":   "http://REDACTED@proxy:3128",
		"https://user@proxy.example:8443": "https://REDACTED@proxy.example:8443",
		"http://proxy:3128":               "http://proxy:3128",
		".cluster.local,10.0.0.0/16":      ".cluster.local,10.0.0.0/16",
		"user:s3cret@proxy:3128":          "REDACTED",
		"http://us%er:pw@proxy":           "REDACTED",
	}
	for in, want := range tests {
		if got := Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzMerge(f *testing.F) {
	f.Add("A=1,HTTP_PROXY=http://old", "HTTP_PROXY=http://new,http_proxy=http://new")
	f.Add("no_proxy=x,NO_PROXY=y", "")
	f.Add("", "HTTPS_PROXY=http://u:p@h:1,LD_PRELOAD=x")
	parse := func(s string) []corev1.EnvVar {
		var out []corev1.EnvVar
		for _, kv := range strings.Split(s, ",") {
			name, value, _ := strings.Cut(kv, "=")
			out = append(out, corev1.EnvVar{Name: name, Value: value})
		}
		return out
	}
	f.Fuzz(func(t *testing.T, envSpec, proxySpec string) {
		base, proxyVars := parse(envSpec), parse(proxySpec)
		got := Merge(base, proxyVars)

		var others []corev1.EnvVar
		for _, e := range base {
			if !IsManaged(e.Name) {
				others = append(others, e)
			}
		}
		if len(got) < len(others) || !cmp.Equal(others, got[:len(others)], cmpEmpty) {
			t.Fatalf("other entries not kept in order: base %v, got %v", base, got)
		}
		seen := map[string]bool{}
		for _, e := range got[len(others):] {
			if !IsManaged(e.Name) || e.Value == "" || seen[e.Name] {
				t.Fatalf("bad proxy entry %v in %v", e, got)
			}
			seen[e.Name] = true
		}
		if again := Merge(got, proxyVars); !cmp.Equal(got, again, cmpEmpty) {
			t.Fatalf("not idempotent: %v then %v", got, again)
		}
	})
}

// cmpEmpty treats nil and empty slices alike: Merge may return either for
// "no entries".
var cmpEmpty = cmp.Comparer(func(a, b []corev1.EnvVar) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
})

func TestClientProxy(t *testing.T) {
	proxyURL := "http://user:s3cret@127.0.0.1:3128"
	tests := []struct {
		name, target, noProxy string
		want                  string // "" for a direct connection
	}{
		{name: "proxied", target: "https://apiserver.test:6443/api", want: proxyURL},
		{name: "excluded by name", target: "https://apiserver.test:6443/api", noProxy: ".test", want: ""},
		{name: "excluded by CIDR", target: "https://10.1.2.3:6443/api", noProxy: "10.0.0.0/8", want: ""},
		{name: "outside the CIDR", target: "https://192.0.2.1:6443/api", noProxy: "10.0.0.0/8", want: proxyURL},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, name := range managedNames {
				t.Setenv(name, "")
			}
			// Made before the variables are set, as the manager's first
			// client is: it must not read them then.
			stale := ClientProxy()
			t.Setenv("HTTPS_PROXY", proxyURL)
			t.Setenv("NO_PROXY", tt.noProxy)
			req := httptest.NewRequest(http.MethodGet, tt.target, nil)
			if u, err := stale(req); err != nil || u != nil {
				t.Fatalf("a proxy made before the variables were set: %v, %v; want none", u, err)
			}
			u, err := ClientProxy()(req)
			if err != nil {
				t.Fatal(err)
			}
			got := ""
			if u != nil {
				got = u.String()
			}
			if got != tt.want {
				t.Errorf("proxy of %s with NO_PROXY=%q: %v, want %q", tt.target, tt.noProxy, u, tt.want)
			}
		})
	}
}
