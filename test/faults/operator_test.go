package faults

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/example-inc/memcached-operator/certs"
	"github.com/example-inc/memcached-operator/test/operatorproc"
)

// operatorConfig says how a spec runs its operator.
type operatorConfig struct {
	// Namespace is the only one the operator watches (WATCH_NAMESPACE), so
	// specs never see each other's objects; it also holds the leader
	// election Lease.
	Namespace string
	// Webhooks serves the admission webhooks in local mode: the operator
	// points the cluster's webhook configurations at itself on 127.0.0.1.
	Webhooks bool
	// LeaderElect turns leader election on.
	LeaderElect bool
	// Env is added to the operator's environment (NAME=value).
	Env []string
}

// operator is one operator process of a spec, restarted on the same ports
// and with the same log after a kill, as a pod's container would be.
type operator struct {
	name                                string
	cfg                                 operatorConfig
	webhookPort, metricsPort, probePort int
	opts                                operatorproc.Options
	proc                                *operatorproc.Process
}

// localWebhookCertDir is shared by every operator of the suite: the first
// makes the local CA and certificate there, the others reuse them.
func localWebhookCertDir() string { return filepath.Join(workDir, "webhook-certs") }

// startOperator starts an operator whose log is operator-<name>.log in the
// work directory and waits until it is ready. It is stopped when the spec
// ends, and the end of its log is printed if the spec failed.
func startOperator(ctx context.Context, name string, cfg operatorConfig) *operator {
	ports, err := operatorproc.FreePorts(3)
	Expect(err).NotTo(HaveOccurred())
	o := &operator{name: name, cfg: cfg, webhookPort: ports[0], metricsPort: ports[1], probePort: ports[2]}
	args := []string{
		"--health-probe-bind-address=" + o.addr(o.probePort),
		// Plain HTTP on loopback: the specs read the metrics without a token.
		"--metrics-bind-address=" + o.addr(o.metricsPort), "--metrics-secure=false",
	}
	if cfg.Webhooks {
		args = append(args, "--webhook-cert-mode=local", "--webhook-cert-dir="+localWebhookCertDir(),
			"--webhook-port="+strconv.Itoa(o.webhookPort))
	} else {
		args = append(args, "--enable-webhooks=false")
	}
	if cfg.LeaderElect {
		args = append(args, "--leader-elect", "--leader-election-namespace="+cfg.Namespace)
	}
	o.opts = operatorproc.Options{
		Binary:     operatorBinary,
		Kubeconfig: cluster.KubeconfigPath(),
		LogPath:    filepath.Join(workDir, "operator-"+name+".log"),
		Args:       args,
		Env:        append([]string{"WATCH_NAMESPACE=" + cfg.Namespace}, cfg.Env...),
	}
	DeferCleanup(func(ctx SpecContext) {
		if o.proc == nil {
			return // it never started; the failure says why
		}
		if CurrentSpecReport().Failed() {
			GinkgoWriter.Println(o.proc.Tail(40))
		}
		// SIGTERM, as at the end of a pod; a killed operator is not
		// running and needs none.
		Expect(o.proc.Stop(45 * time.Second)).To(Succeed())
		if cfg.Webhooks {
			// A killed operator in local mode leaves its fail-closed
			// webhook configurations behind; the next spec must not meet them.
			Expect(removeLocalWebhooks(ctx)).To(Succeed())
		}
	}, NodeTimeout(2*time.Minute))
	o.start(ctx)
	return o
}

func (o *operator) addr(port int) string { return "127.0.0.1:" + strconv.Itoa(port) }

// start runs the process and waits until /readyz answers and, with
// webhooks, until the webhook configurations point at it.
func (o *operator) start(ctx context.Context) {
	var err error
	o.proc, err = operatorproc.Start(o.opts)
	Expect(err).NotTo(HaveOccurred())
	readyCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	Expect(o.proc.WaitHTTP(readyCtx, "http://"+o.addr(o.probePort)+"/readyz")).To(Succeed())
	if o.cfg.Webhooks {
		// The server is ready before the local certificate source has
		// written the configurations; a create in between would skip them.
		Eventually(func(g Gomega) {
			m := &admissionregistrationv1.MutatingWebhookConfiguration{}
			g.Expect(k8s.Get(ctx, client.ObjectKey{Name: certs.LocalNamePrefix + "mutating-webhook-configuration"}, m)).To(Succeed())
			g.Expect(m.Webhooks).NotTo(BeEmpty())
			g.Expect(m.Webhooks[0].ClientConfig.URL).To(HaveValue(HavePrefix(certs.LocalWebhookURL(o.webhookPort))))
		}).WithContext(ctx).WithTimeout(time.Minute).Should(Succeed())
	}
}

// kill sends SIGKILL, the crash no cleanup code sees.
func (o *operator) kill() { Expect(o.proc.Kill()).To(Succeed()) }

// restart starts the killed operator again, as kubelet restarts a crashed
// container, and waits until it is ready.
func (o *operator) restart(ctx context.Context) {
	Expect(o.proc.Running()).To(BeFalse(), "restart is for a killed operator")
	o.start(ctx)
}

// metrics is the operator's /metrics in the Prometheus text format.
func (o *operator) metrics(ctx context.Context) (string, error) {
	return operatorproc.Get(ctx, "http://"+o.addr(o.metricsPort)+"/metrics")
}

// reconciles is controller_runtime_reconcile_total of the memcached
// controller, over every result; 0 when the controller has not started (a
// standby replica does not start it).
func (o *operator) reconciles(ctx context.Context) (float64, error) {
	text, err := o.metrics(ctx)
	if err != nil {
		return 0, err
	}
	return metricSum(text, "controller_runtime_reconcile_total", `controller="memcached"`), nil
}

// rssKiB is the process's resident memory (VmRSS) in KiB.
func (o *operator) rssKiB() (int64, error) {
	u, err := o.proc.Usage()
	return u.RSSBytes >> 10, err
}

// removeLocalWebhooks deletes the webhook configurations that an operator in
// local mode writes.
func removeLocalWebhooks(ctx context.Context) error {
	mutating := &admissionregistrationv1.MutatingWebhookConfigurationList{}
	validating := &admissionregistrationv1.ValidatingWebhookConfigurationList{}
	for _, list := range []client.ObjectList{mutating, validating} {
		if err := k8s.List(ctx, list); err != nil {
			return err
		}
	}
	var objs []client.Object
	for i := range mutating.Items {
		objs = append(objs, &mutating.Items[i])
	}
	for i := range validating.Items {
		objs = append(objs, &validating.Items[i])
	}
	for _, obj := range objs {
		if strings.HasPrefix(obj.GetName(), certs.LocalNamePrefix) {
			if err := client.IgnoreNotFound(k8s.Delete(ctx, obj)); err != nil {
				return err
			}
		}
	}
	return nil
}
