package localcluster_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/example-inc/memcached-operator/hack/local-cluster/localcluster"

	"github.com/example-inc/memcached-operator/api/v1/gen"
	"github.com/example-inc/memcached-operator/hack/repo"
)

const (
	// readyTimeout allows for a loaded two-core machine; a 3-replica rollout
	// usually takes under a second.
	readyTimeout = time.Minute
	poll         = 100 * time.Millisecond
)

var _ = Describe("Cluster", Ordered, func() {
	var (
		cluster *localcluster.Cluster
		cs      kubernetes.Interface
		dir     string
		failed  bool
		ns      = "restricted"
	)

	BeforeAll(func(ctx SpecContext) {
		binDir := repo.ControlPlaneDir()
		var err error
		dir, err = os.MkdirTemp("", "localcluster-test-")
		Expect(err).NotTo(HaveOccurred())
		cluster, err = localcluster.New(localcluster.Options{BinDir: binDir, Dir: dir, Nodes: 2})
		Expect(err).NotTo(HaveOccurred())

		begin := time.Now()
		Expect(cluster.Start(ctx)).To(Succeed())
		AddReportEntry("start-up time", time.Since(begin).Round(time.Millisecond).String())
		cs = kubernetes.NewForConfigOrDie(cluster.RestConfig())
	}, NodeTimeout(3*time.Minute))

	AfterEach(func() {
		if CurrentSpecReport().Failed() {
			failed = true
		}
	})

	AfterAll(func() {
		if cluster != nil {
			Expect(cluster.Stop()).To(Succeed())
		}
		if dir == "" {
			return
		}
		if failed {
			// The logs are the first thing to read after a failure.
			_, _ = fmt.Fprintf(GinkgoWriter, "cluster state and logs kept in %s\n", dir)
			return
		}
		Expect(os.RemoveAll(dir)).To(Succeed())
	})

	It("writes a kubeconfig with admin credentials", func() {
		Expect(cluster.KubeconfigPath()).To(Equal(filepath.Join(dir, "kubeconfig")))
		Expect(cluster.KubeconfigPath()).To(BeAnExistingFile())
		Expect(cluster.RestConfig().Host).To(HavePrefix("https://127.0.0.1:"))
		for _, c := range []localcluster.Component{localcluster.Etcd, localcluster.APIServer,
			localcluster.ControllerManager, localcluster.Scheduler, localcluster.Kwok} {
			Expect(cluster.LogPath(c)).To(BeAnExistingFile())
		}
	})

	It("schedules a Deployment's pods and makes them Ready", func(ctx SpecContext) {
		_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
			Name:   ns,
			Labels: map[string]string{"pod-security.kubernetes.io/enforce": "restricted"},
		}}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())

		_, err = cs.AppsV1().Deployments(ns).Create(ctx, gen.UnrelatedDeployment(ns, "pause", 3), metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		expectReadyReplicas(ctx, cs, ns, "pause", 3)

		pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=pause"})
		Expect(err).NotTo(HaveOccurred())
		Expect(pods.Items).To(HaveLen(3))
		for _, pod := range pods.Items {
			// The template sets no nodeName, so the scheduler bound them.
			Expect(pod.Spec.NodeName).To(HavePrefix("kwok-node-"), "pod %s", pod.Name)
			Expect(pod.Status.Phase).To(Equal(corev1.PodRunning))
		}
	}, SpecTimeout(2*time.Minute))

	It("enforces Pod Security admission", func(ctx SpecContext) {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "privileged", Namespace: ns},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{
				Name:            "c",
				Image:           "registry.k8s.io/pause:3.10",
				SecurityContext: &corev1.SecurityContext{Privileged: ptr.To(true)},
			}}},
		}
		_, err := cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "got %v", err)
		Expect(err.Error()).To(ContainSubstring("violates PodSecurity"))
	}, SpecTimeout(time.Minute))

	It("restarts the API server on the same port, and the cluster keeps working", func(ctx SpecContext) {
		host := cluster.RestConfig().Host
		pid := cluster.PIDs()[localcluster.APIServer]

		begin := time.Now()
		Expect(cluster.StopComponent(localcluster.APIServer)).To(Succeed())
		AddReportEntry("API server stop time", time.Since(begin).Round(time.Millisecond).String())
		Expect(cluster.PIDs()).NotTo(HaveKey(localcluster.APIServer))
		_, err := cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		Expect(err).To(HaveOccurred(), "the API server should be down")

		begin = time.Now()
		Expect(cluster.StartComponent(ctx, localcluster.APIServer)).To(Succeed())
		AddReportEntry("API server restart time", time.Since(begin).Round(time.Millisecond).String())
		Expect(cluster.RestConfig().Host).To(Equal(host))
		Expect(cluster.PIDs()[localcluster.APIServer]).NotTo(BeElementOf(0, pid))

		// The client made before the restart works again, and the
		// controllers, scheduler and kwok have reconnected.
		scale(ctx, cs, ns, "pause", 4)
		expectReadyReplicas(ctx, cs, ns, "pause", 4)
	}, SpecTimeout(2*time.Minute))

	It("restarts a crashed etcd with its data", func(ctx SpecContext) {
		Expect(cluster.KillComponent(localcluster.Etcd)).To(Succeed())
		begin := time.Now()
		Expect(cluster.StartComponent(ctx, localcluster.Etcd)).To(Succeed())
		AddReportEntry("etcd restart time", time.Since(begin).Round(time.Millisecond).String())

		// Written before the restart, so read back from the kept data.
		Eventually(func(ctx context.Context) error {
			_, err := cs.AppsV1().Deployments(ns).Get(ctx, "pause", metav1.GetOptions{})
			return err
		}).WithContext(ctx).WithTimeout(readyTimeout).WithPolling(poll).Should(Succeed())
		scale(ctx, cs, ns, "pause", 2)
		expectReadyReplicas(ctx, cs, ns, "pause", 2)
	}, SpecTimeout(2*time.Minute))

	It("garbage-collects the pods of a deleted Deployment", func(ctx SpecContext) {
		Expect(cs.AppsV1().Deployments(ns).Delete(ctx, "pause", metav1.DeleteOptions{
			PropagationPolicy: ptr.To(metav1.DeletePropagationBackground),
		})).To(Succeed())
		Eventually(func(ctx context.Context) ([]corev1.Pod, error) {
			pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=pause"})
			if err != nil {
				return nil, err
			}
			return pods.Items, nil
		}).WithContext(ctx).WithTimeout(readyTimeout).WithPolling(poll).Should(BeEmpty())
	}, SpecTimeout(2*time.Minute))

	It("stops every process it started", func() {
		pids := cluster.PIDs()
		Expect(pids).To(HaveLen(5))
		Expect(localcluster.Leftovers(dir)).NotTo(BeEmpty(), "a running cluster is found by the check")

		begin := time.Now()
		Expect(cluster.Stop()).To(Succeed())
		AddReportEntry("stop time", time.Since(begin).Round(time.Millisecond).String())

		Expect(cluster.PIDs()).To(BeEmpty())
		for c, pid := range pids {
			// Each component leads its own process group; neither the
			// process nor anything in its group may remain.
			Expect(syscall.Kill(pid, 0)).To(MatchError(syscall.ESRCH), "%s (pid %d) still exists", c, pid)
			Expect(syscall.Kill(-pid, 0)).To(MatchError(syscall.ESRCH), "process group of %s (%d) not empty", c, pid)
		}
		Expect(childProcesses()).To(BeEmpty(), "children of the test process")
		Expect(localcluster.Leftovers(dir)).To(BeEmpty())
		Expect(cluster.Stop()).To(Succeed(), "Stop is idempotent")
	})
})

func expectReadyReplicas(ctx context.Context, cs kubernetes.Interface, ns, name string, want int32) {
	GinkgoHelper()
	Eventually(func(ctx context.Context) (*appsv1.Deployment, error) {
		return cs.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
	}).WithContext(ctx).WithTimeout(readyTimeout).WithPolling(poll).Should(And(
		HaveField("Status.ReadyReplicas", want),
		HaveField("Status.Replicas", want),
	))
}

// scale retries through the errors of a control plane that has only just
// come back.
func scale(ctx context.Context, cs kubernetes.Interface, ns, name string, replicas int32) {
	GinkgoHelper()
	Eventually(func(ctx context.Context) error {
		s, err := cs.AppsV1().Deployments(ns).GetScale(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		s.Spec.Replicas = replicas
		_, err = cs.AppsV1().Deployments(ns).UpdateScale(ctx, name, s, metav1.UpdateOptions{})
		return err
	}).WithContext(ctx).WithTimeout(readyTimeout).WithPolling(poll).Should(Succeed())
}

// childProcesses lists the processes whose parent is this test binary, as
// "pid command" strings.
func childProcesses() ([]string, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	self := strconv.Itoa(os.Getpid())
	var children []string
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if errors.Is(err, os.ErrNotExist) {
			continue // exited while we looked
		}
		if err != nil {
			return nil, err
		}
		// "pid (comm) state ppid ...": comm may hold spaces and parentheses,
		// so split after the last ')'.
		end := bytes.LastIndexByte(stat, ')')
		if end < 0 {
			continue
		}
		fields := strings.Fields(string(stat[end+1:]))
		if len(fields) > 1 && fields[1] == self {
			start := bytes.IndexByte(stat, '(')
			children = append(children, e.Name()+" "+string(stat[start+1:end]))
		}
	}
	return children, nil
}
