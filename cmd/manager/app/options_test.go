package app

import (
	"crypto/tls"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/example-inc/memcached-operator/certs/tlsprofile"
	"github.com/example-inc/memcached-operator/webhooks"
)

// parse runs parseOptions(args) with each variable of vars set as env has
// it (empty when missing there), and fails the test unless the error is as
// wantErr says: none for "", else one containing it. It reports whether
// there are options to check.
func parse(t *testing.T, vars []string, env map[string]string, args []string, wantErr string) (options, bool) {
	t.Helper()
	for _, k := range vars {
		t.Setenv(k, env[k])
	}
	o, err := parseOptions(args)
	if wantErr != "" {
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Fatalf("parseOptions(%v) error = %v, want one containing %q", args, err, wantErr)
		}
		return o, false
	}
	if err != nil {
		t.Fatalf("parseOptions(%v): %v", args, err)
	}
	return o, true
}

func TestParseOptionsSizePolicy(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		args    []string
		want    webhooks.SizePolicy
		wantErr string
	}{
		{name: "defaults", want: webhooks.SizePolicy{Default: 3, Min: 1, Max: 16}},
		{name: "flags", args: []string{"--default-size=2", "--min-size=2", "--max-size=4"},
			want: webhooks.SizePolicy{Default: 2, Min: 2, Max: 4}},
		{name: "environment, as a Subscription sets it",
			env:  map[string]string{"MEMCACHED_DEFAULT_SIZE": "5", "MEMCACHED_MAX_SIZE": "32"},
			want: webhooks.SizePolicy{Default: 5, Min: 1, Max: 32}},
		{name: "a flag wins over the environment",
			env: map[string]string{"MEMCACHED_MAX_SIZE": "32"}, args: []string{"--max-size=8"},
			want: webhooks.SizePolicy{Default: 3, Min: 1, Max: 8}},
		{name: "default above max", args: []string{"--max-size=2"}, wantErr: "--default-size=3 is outside"},
		{name: "min above max", args: []string{"--min-size=5", "--max-size=4", "--default-size=4"}, wantErr: "--max-size=4 is less than --min-size=5"},
		{name: "not a number in the environment", env: map[string]string{"MEMCACHED_MIN_SIZE": "two"}, wantErr: `MEMCACHED_MIN_SIZE="two"`},
		{name: "beyond int32", args: []string{"--max-size=2147483648"}, wantErr: "out of range"},
		{name: "negative shutdown delay", args: []string{"--shutdown-delay=-1s"}, wantErr: "--shutdown-delay=-1s: must not be negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, ok := parse(t, []string{"MEMCACHED_DEFAULT_SIZE", "MEMCACHED_MIN_SIZE", "MEMCACHED_MAX_SIZE"}, tt.env, tt.args, tt.wantErr)
			if ok && o.sizePolicy != tt.want {
				t.Errorf("size policy = %+v, want %+v", o.sizePolicy, tt.want)
			}
		})
	}
}

func TestParseWatchNamespaces(t *testing.T) {
	tests := map[string][]string{
		"":          nil,
		"a":         {"a"},
		"a, b,,c ,": {"a", "b", "c"},
	}
	for in, want := range tests {
		if diff := cmp.Diff(want, parseWatchNamespaces(in)); diff != "" {
			t.Errorf("parseWatchNamespaces(%q) (-want +got):\n%s", in, diff)
		}
	}
}

// TestParseOptionsEnvironment covers the variables OLM and a Subscription
// set, which a Deployment cannot pass as flags.
func TestParseOptionsEnvironment(t *testing.T) {
	tests := []struct {
		name           string
		env            map[string]string
		args           []string
		wantWebhooks   bool
		wantImage      string
		wantNamespaces []string
		// networkPoliciesOff: NETWORK_POLICIES or the flag turned them off.
		networkPoliciesOff bool
	}{
		{name: "nothing set", wantWebhooks: true},
		{name: "webhooks off", env: map[string]string{"ENABLE_WEBHOOKS": "false"}},
		{name: "NetworkPolicies off", env: map[string]string{"NETWORK_POLICIES": "false"}, wantWebhooks: true, networkPoliciesOff: true},
		{name: "NetworkPolicies off by flag", args: []string{"--network-policies=false"}, wantWebhooks: true, networkPoliciesOff: true},
		{name: "webhooks on", env: map[string]string{"ENABLE_WEBHOOKS": "true"}, wantWebhooks: true},
		{name: "the flag wins", env: map[string]string{"ENABLE_WEBHOOKS": "false"}, args: []string{"--enable-webhooks=true"},
			wantWebhooks: true},
		{name: "OLM's variables",
			env:          map[string]string{"RELATED_IMAGE_MEMCACHED": "registry.test/memcached@sha256:1", "WATCH_NAMESPACE": "a,b"},
			wantWebhooks: true, wantImage: "registry.test/memcached@sha256:1", wantNamespaces: []string{"a", "b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, _ := parse(t, []string{"ENABLE_WEBHOOKS", "NETWORK_POLICIES", "RELATED_IMAGE_MEMCACHED", "WATCH_NAMESPACE"}, tt.env, tt.args, "")
			if o.networkPolicies == tt.networkPoliciesOff {
				t.Errorf("networkPolicies %v, want %v", o.networkPolicies, !tt.networkPoliciesOff)
			}
			if o.enableWebhooks != tt.wantWebhooks || o.memcachedImage != tt.wantImage ||
				!cmp.Equal(o.watchNamespaces, tt.wantNamespaces) {
				t.Errorf("webhooks %v, image %q, namespaces %q; want %v, %q, %q", o.enableWebhooks, o.memcachedImage,
					o.watchNamespaces, tt.wantWebhooks, tt.wantImage, tt.wantNamespaces)
			}
		})
	}
}

// The TLS flags take kube-apiserver's names and forms; a value that names
// nothing, or would change nothing, stops the operator at start. Without
// them there are no overrides: the cluster's profile is followed.
func TestParseOptionsTLS(t *testing.T) {
	for _, tt := range []struct {
		name, wantErr string
		args          []string
		want          tlsprofile.Overrides
	}{
		{name: "kube-apiserver's names", args: []string{"--tls-min-version=VersionTLS12", "--tls-cipher-suites=TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384"},
			want: tlsprofile.Overrides{MinVersion: tls.VersionTLS12, CipherSuites: []uint16{tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384}}},
		{name: "no flags"},
		{name: "a version number", args: []string{"--tls-min-version=1.2"},
			wantErr: `--tls-min-version="1.2" --tls-cipher-suites="": min version "1.2": want one of VersionTLS10`},
		{name: "an OpenSSL name", args: []string{"--tls-cipher-suites=ECDHE-RSA-AES256-GCM-SHA384"},
			wantErr: "Cipher suite ECDHE-RSA-AES256-GCM-SHA384 not supported"},
		{name: "a TLS 1.3 suite", args: []string{"--tls-cipher-suites=TLS_AES_128_GCM_SHA256"}, wantErr: "TLS 1.3 suite"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o, ok := parse(t, nil, nil, tt.args, tt.wantErr)
			if got := o.tlsOverrides; ok && (got.MinVersion != tt.want.MinVersion || !cmp.Equal(got.CipherSuites, tt.want.CipherSuites)) {
				t.Errorf("overrides = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// The intervals at which the operator asks pods something come from the
// environment, which a Subscription can set, or the flag, which wins; 0
// turns the asking off and what is not a duration stops the operator.
func TestParseOptionsPodIntervals(t *testing.T) {
	for _, setting := range []struct {
		env, flag string
		def       time.Duration
		of        func(options) time.Duration
	}{
		{"SERVED_CERTIFICATE_INTERVAL", "--served-certificate-interval", 10 * time.Minute, func(o options) time.Duration { return o.servedCertInterval }},
		{"WARMUP_INTERVAL", "--warmup-interval", 5 * time.Second, func(o options) time.Duration { return o.warmupInterval }},
	} {
		tests := []struct {
			name    string
			env     string
			args    []string
			want    time.Duration
			wantErr string
		}{
			{name: "default", want: setting.def},
			{name: "from the environment", env: "30s", want: 30 * time.Second},
			{name: "off", env: "0", want: 0},
			{name: "the flag wins", env: "30s", args: []string{setting.flag + "=1h"}, want: time.Hour},
			{name: "not a duration", env: "soon", wantErr: setting.env + `="soon"`},
			{name: "negative", args: []string{setting.flag + "=-1s"}, wantErr: "must not be negative"},
		}
		for _, tt := range tests {
			t.Run(setting.env+"/"+tt.name, func(t *testing.T) {
				o, ok := parse(t, []string{setting.env}, map[string]string{setting.env: tt.env}, tt.args, tt.wantErr)
				if got := setting.of(o); ok && got != tt.want {
					t.Errorf("interval %s, want %s", got, tt.want)
				}
			})
		}
	}
}
