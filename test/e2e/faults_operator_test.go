package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/example-inc/memcached-operator/certs"
	"github.com/example-inc/memcached-operator/test/framework/operatorproc"
)

// Sizes of the fault specs, from the environment so CI and a developer can
// pick them without editing code.
var (
	// crashCRs is the number of Memcached objects in the crash rollout: 200
	// in CI too.
	crashCRs = envInt("FAULT_CRS", 200)
	// crashKills is how many times the operator is killed during it.
	crashKills = envInt("FAULT_KILLS", 5)
)

// envInt reads a positive integer from the environment, or def.
func envInt(name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		panic(fmt.Sprintf("%s=%q: want a positive integer", name, v))
	}
	return n
}

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

// operator is one operator process of a spec; Restart brings a killed one
// back on the same ports and log, as kubelet restarts a crashed container.
type operator struct {
	*operatorproc.Operator
}

// localWebhookCertDir is shared by every operator of the suite: the first
// makes the local CA and certificate there, the others reuse them.
func localWebhookCertDir() string { return filepath.Join(workDir, "faults-webhook-certs") }

// startOperator starts an operator whose log is faults-<name>.log in the
// work directory and returns once it is ready (with webhooks, once the
// cluster's webhook configurations point at it). It is stopped when the
// spec ends, and the end of its log is printed if the spec failed.
func startOperator(ctx context.Context, name string, cfg operatorConfig) *operator {
	opts := operatorproc.Options{
		Binary:         operatorBinary,
		Kubeconfig:     cluster.KubeconfigPath(),
		LogPath:        filepath.Join(workDir, "faults-"+name+".log"),
		Webhooks:       operatorproc.WebhooksOff,
		WatchNamespace: cfg.Namespace,
		// The fault specs' pods are kwok's: nothing answers at their
		// addresses, so no rollout may wait to read their counters.
		Env: append([]string{"WARMUP_INTERVAL=0"}, cfg.Env...),
	}
	if cfg.Webhooks {
		opts.Webhooks, opts.WebhookCertDir = operatorproc.WebhooksLocal, localWebhookCertDir()
	}
	if cfg.LeaderElect {
		opts.LeaderElectionNamespace = cfg.Namespace
	}
	op, err := operatorproc.Start(ctx, opts)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func(ctx SpecContext) {
		if CurrentSpecReport().Failed() {
			GinkgoWriter.Println(op.Tail(40))
		}
		// SIGTERM, as at the end of a pod; a killed operator is not
		// running and needs none.
		Expect(op.Stop(45 * time.Second)).To(Succeed())
		if cfg.Webhooks {
			// A killed operator in local mode leaves its fail-closed
			// webhook configurations behind; the next spec must not meet them.
			Expect(removeLocalWebhooks(ctx)).To(Succeed())
		}
	}, NodeTimeout(2*time.Minute))
	return &operator{Operator: op}
}

// kill sends SIGKILL, the crash no cleanup code sees.
func (o *operator) kill() { Expect(o.Kill()).To(Succeed()) }

// restart starts the killed operator again and waits until it is ready.
func (o *operator) restart(ctx context.Context) {
	Expect(o.Running()).To(BeFalse(), "restart is for a killed operator")
	Expect(o.Restart(ctx)).To(Succeed())
}

// rssKiB is the process's resident memory (VmRSS) in KiB.
func (o *operator) rssKiB() (int64, error) {
	u, err := o.Usage()
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
