package operatorproc

import (
	"slices"
	"strings"
	"testing"
)

func TestEnvironKeepsTheTestsOperatorVariablesOut(t *testing.T) {
	t.Setenv("HTTPS_PROXY", "http://user:secret@proxy:3128")
	t.Setenv("WATCH_NAMESPACE", "from-the-shell")
	t.Setenv("PATH_FOR_TEST", "kept")
	env := Options{Kubeconfig: "/k", WatchNamespace: "given", Env: []string{"NO_PROXY=.svc"}}.environ()
	for _, want := range []string{"KUBECONFIG=/k", "WATCH_NAMESPACE=given", "PATH_FOR_TEST=kept", "NO_PROXY=.svc"} {
		if !slices.Contains(env, want) {
			t.Errorf("environment lacks %s", want)
		}
	}
	for _, kv := range env {
		if strings.HasPrefix(kv, "HTTPS_PROXY=") || kv == "WATCH_NAMESPACE=from-the-shell" {
			t.Errorf("the test's %s leaked into the operator's environment", kv)
		}
	}
}

func TestArgs(t *testing.T) {
	ports := Ports{Probe: 1, Metrics: 2, Webhook: 3}
	tests := []struct {
		name      string
		opts      Options
		want, not []string
	}{
		{name: "webhooks off, plain metrics, no election",
			opts: Options{Webhooks: WebhooksOff},
			want: []string{"--enable-webhooks=false", "--metrics-secure=false", "--leader-elect=false",
				"--health-probe-bind-address=127.0.0.1:1", "--metrics-bind-address=127.0.0.1:2"},
			not: []string{"--webhook-port=3"}},
		{name: "local webhooks name the generated manifests",
			opts: Options{Webhooks: WebhooksLocal, WebhookCertDir: "/c"},
			want: []string{"--enable-webhooks=true", "--webhook-cert-mode=local", "--webhook-cert-dir=/c", "--webhook-port=3"}},
		{name: "mounted webhooks, secure metrics with a certificate, election",
			opts: Options{Webhooks: WebhooksMounted, WebhookCertDir: "/c", SecureMetrics: true, MetricsCertDir: "/m", LeaderElectionNamespace: "ns"},
			want: []string{"--webhook-cert-mode=mounted", "--metrics-secure=true", "--metrics-cert-path=/m",
				"--leader-elect=true", "--leader-election-namespace=ns"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := tt.opts.args(ports)
			for _, w := range tt.want {
				if !slices.Contains(args, w) {
					t.Errorf("args %v lack %s", args, w)
				}
			}
			for _, n := range tt.not {
				if slices.Contains(args, n) {
					t.Errorf("args %v hold %s", args, n)
				}
			}
			if tt.opts.Webhooks == WebhooksLocal && !slices.ContainsFunc(args, func(a string) bool {
				return strings.HasPrefix(a, "--webhook-manifests=") && strings.HasSuffix(a, "config/webhook/manifests.yaml")
			}) {
				t.Errorf("local mode args %v do not name config/webhook/manifests.yaml", args)
			}
		})
	}
}

func TestOwnFlagsFollowTheGivenArgsAndExtraArgsComeLast(t *testing.T) {
	args := Options{Webhooks: WebhooksOff, Args: []string{"--leader-elect", "--metrics-bind-address=:8443"}, ExtraArgs: []string{"--zap-log-level=5"}}.args(Ports{1, 2, 3})
	if args[0] != "--leader-elect" || args[len(args)-1] != "--zap-log-level=5" {
		t.Errorf("args = %v: want the given args first and the extra args last", args)
	}
	if slices.Index(args, "--metrics-bind-address=127.0.0.1:2") < slices.Index(args, "--metrics-bind-address=:8443") {
		t.Errorf("args = %v: the launcher's metrics address must come after the given one, so it wins", args)
	}
}

func TestValidate(t *testing.T) {
	err := Options{Webhooks: "sometimes", MetricsCertDir: "/m"}.validate()
	for _, want := range []string{"option Binary", "option Kubeconfig", "option LogPath", `"sometimes"`, "SecureMetrics"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("validate() = %v, want it to name %s", err, want)
		}
	}
	if err := (Options{Binary: "b", Kubeconfig: "k", LogPath: "l", Webhooks: WebhooksLocal}).validate(); err == nil || !strings.Contains(err.Error(), "WebhookCertDir") {
		t.Errorf("local webhooks without a cert dir: %v", err)
	}
}
