package e2e

import (
	"context"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"net"
	"slices"
	"strconv"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	operatorsv1 "github.com/operator-framework/api/pkg/operators/v1"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cachev1 "github.com/example-inc/memcached-operator/api/v1"
	"github.com/example-inc/memcached-operator/certs"
	"github.com/example-inc/memcached-operator/controllers/ingresspolicy"
	"github.com/example-inc/memcached-operator/controllers/ingresspolicy/netpolicy"
	"github.com/example-inc/memcached-operator/controllers/monitoring"
	"github.com/example-inc/memcached-operator/hack/local-cluster/images"
	"github.com/example-inc/memcached-operator/hack/local-cluster/localcluster"
	"github.com/example-inc/memcached-operator/hack/local-cluster/process"
	"github.com/example-inc/memcached-operator/test/framework/harness"
	"github.com/example-inc/memcached-operator/test/framework/manifest"
)

// What the bundle and the catalog name (bundle/ and make catalog).
const (
	packageName    = "memcached-operator"
	channelName    = "stable"
	deploymentName = "memcached-operator-controller-manager"
	// serviceAccountName is the manager's, from the CSV's permissions.
	serviceAccountName = "memcached-operator-controller-manager"
	// webhookService is the Service OLM makes for the webhooks:
	// <deploymentName>-service, with its certificate in <service>-cert.
	webhookService = deploymentName + "-service"
	// webhookPort is the manager container's webhook-server port.
	webhookPort = 9443
	// olmCAKey is the key of OLM's certificate Secret that holds its CA.
	olmCAKey = "olmCAKey"
	// denied is how the API server reports the validating webhook's refusal.
	denied = `admission webhook "vmemcached-v1.kb.io" denied the request`
)

// install is one install of the operator by OLM: an OperatorGroup and a
// Subscription in namespace. The OperatorGroup targets targets; none means
// every namespace (AllNamespaces).
type install struct {
	namespace string
	targets   []string
	// catalog is the CatalogSource subscribed to: catalogSourceName when
	// empty.
	catalog string
	// asPublished subscribes without subscriptionConfig, so the pods run
	// the images the CSV names, which the node must pull.
	asPublished bool
}

// mode is the install mode OLM derives from the OperatorGroup.
func (in install) mode() operatorsv1alpha1.InstallModeType {
	switch {
	case len(in.targets) == 0:
		return operatorsv1alpha1.InstallModeTypeAllNamespaces
	case len(in.targets) > 1:
		return operatorsv1alpha1.InstallModeTypeMultiNamespace
	case in.targets[0] == in.namespace:
		return operatorsv1alpha1.InstallModeTypeOwnNamespace
	default:
		return operatorsv1alpha1.InstallModeTypeSingleNamespace
	}
}

func (in install) String() string {
	return string(in.mode()) + " install in " + in.namespace
}

// watched is what the operator should watch, as OLM reports it in the
// OperatorGroup's status: the targets, or "" for all.
func (in install) watched() []string {
	if len(in.targets) == 0 {
		return []string{metav1.NamespaceAll}
	}
	return in.targets
}

// subscribe creates the install's namespace and targets (those missing),
// its OperatorGroup and its Subscription to the suite's catalog.
func (in install) subscribe(ctx context.Context) {
	GinkgoHelper()
	for _, ns := range append([]string{in.namespace}, in.targets...) {
		err := k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
		Expect(client.IgnoreAlreadyExists(err)).To(Succeed())
	}
	Expect(k8s.Create(ctx, &operatorsv1.OperatorGroup{
		ObjectMeta: metav1.ObjectMeta{Name: packageName, Namespace: in.namespace},
		Spec:       operatorsv1.OperatorGroupSpec{TargetNamespaces: in.targets},
	})).To(Succeed())
	catalog, config := catalogSourceName, subscriptionConfig()
	if in.catalog != "" {
		catalog = in.catalog
	}
	if in.asPublished {
		config = nil
	}
	Expect(k8s.Create(ctx, &operatorsv1alpha1.Subscription{
		ObjectMeta: metav1.ObjectMeta{Name: packageName, Namespace: in.namespace},
		Spec: &operatorsv1alpha1.SubscriptionSpec{
			CatalogSource: catalog, CatalogSourceNamespace: olmNamespace,
			Package: packageName, Channel: channelName, InstallPlanApproval: operatorsv1alpha1.ApprovalAutomatic,
			Config: config,
		},
	})).To(Succeed())
}

// subscriptionMaxSize is the size policy's maximum the Subscriptions set,
// below the default of 16: a refusal of a size between the two comes from
// a pod that runs with the Subscription's configuration.
const subscriptionMaxSize = 12

// subscriptionConfig points the operator at the memcached and exporter
// images the real node holds, as a disconnected install points it at a
// mirror (the Subscription's env overrides the CSV's), and lowers the
// maximum size.
func subscriptionConfig() *operatorsv1alpha1.SubscriptionConfig {
	return &operatorsv1alpha1.SubscriptionConfig{
		Env: []corev1.EnvVar{
			{Name: "RELATED_IMAGE_MEMCACHED", Value: images.MemcachedTag},
			{Name: "RELATED_IMAGE_MEMCACHED_EXPORTER", Value: images.MemcachedExporterTag},
			{Name: "MEMCACHED_MAX_SIZE", Value: strconv.Itoa(subscriptionMaxSize)},
		},
	}
}

// expectInstalled waits until the Subscription has installed version: its
// InstallPlan Complete and the CSV Succeeded. It returns the CSV.
func (in install) expectInstalled(ctx context.Context, version string) *operatorsv1alpha1.ClusterServiceVersion {
	GinkgoHelper()
	csv := &operatorsv1alpha1.ClusterServiceVersion{}
	Eventually(func(g Gomega) {
		g.Expect(olmOps.olm.Running()).To(BeTrue(), "olm exited:\n%s", olmOps.olm.Tail(20))
		g.Expect(olmOps.catalog.Running()).To(BeTrue(), "catalog exited:\n%s", olmOps.catalog.Tail(20))
		sub := &operatorsv1alpha1.Subscription{}
		g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: in.namespace, Name: packageName}, sub)).To(Succeed())
		g.Expect(sub.Status.InstalledCSV).To(Equal(csvName(version)), "%s: Subscription state %q, conditions %+v", in, sub.Status.State, sub.Status.Conditions)
		g.Expect(sub.Status.InstallPlanRef).NotTo(BeNil())
		ip := &operatorsv1alpha1.InstallPlan{}
		g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: in.namespace, Name: sub.Status.InstallPlanRef.Name}, ip)).To(Succeed())
		g.Expect(ip.Spec.ClusterServiceVersionNames).To(ContainElement(csvName(version)))
		g.Expect(ip.Status.Phase).To(Equal(operatorsv1alpha1.InstallPlanPhaseComplete))
		g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: in.namespace, Name: csvName(version)}, csv)).To(Succeed())
		g.Expect(csv.Status.Phase).To(Equal(operatorsv1alpha1.CSVPhaseSucceeded), "%s: CSV %s: %s", in, csv.Status.Reason, csv.Status.Message)
	}).WithContext(ctx).WithTimeout(4 * time.Minute).WithPolling(250 * time.Millisecond).Should(Succeed())
	return csv
}

// operatorGroup is the install's OperatorGroup.
func (in install) operatorGroup(ctx context.Context) *operatorsv1.OperatorGroup {
	GinkgoHelper()
	og := &operatorsv1.OperatorGroup{}
	Expect(k8s.Get(ctx, client.ObjectKey{Namespace: in.namespace, Name: packageName}, og)).To(Succeed())
	return og
}

// deployment is the manager Deployment OLM made for the install.
func (in install) deployment(ctx context.Context) *appsv1.Deployment {
	GinkgoHelper()
	d := &appsv1.Deployment{}
	Expect(k8s.Get(ctx, client.ObjectKey{Namespace: in.namespace, Name: deploymentName}, d)).To(Succeed())
	return d
}

// operatorPod waits until the manager Deployment has rolled out to exactly
// one pod, Running and Ready on the real node with image, and nothing else
// (no pod of an older ReplicaSet, not even terminating), and returns it.
func (in install) operatorPod(ctx context.Context, image string) *corev1.Pod {
	GinkgoHelper()
	var pod corev1.Pod
	Eventually(func(g Gomega) {
		d := &appsv1.Deployment{}
		g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: in.namespace, Name: deploymentName}, d)).To(Succeed())
		g.Expect(d.Status.ObservedGeneration).To(Equal(d.Generation))
		g.Expect(d.Status.UpdatedReplicas).To(Equal(int32(1)))
		var pods corev1.PodList
		g.Expect(k8s.List(ctx, &pods, client.InNamespace(in.namespace), client.MatchingLabels(d.Spec.Selector.MatchLabels))).To(Succeed())
		g.Expect(pods.Items).To(HaveLen(1), "%s: one manager pod", in)
		pod = pods.Items[0]
		g.Expect(pod.DeletionTimestamp).To(BeNil())
		g.Expect(pod.Spec.NodeName).To(Equal(localcluster.RealNodeName))
		c, err := manifest.ManagerIn(pod.Spec.Containers)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(c.Image).To(Equal(image))
		g.Expect(harness.PodReady(&pod)).To(BeTrue(), "%s: manager pod %s Ready", in, pod.Name)
	}).WithContext(ctx).WithTimeout(3 * time.Minute).WithPolling(250 * time.Millisecond).Should(Succeed())
	return &pod
}

// operatorLog is the manager container's log in pod, through kubelet.
func operatorLog(ctx context.Context, pod *corev1.Pod) string {
	GinkgoHelper()
	out, err := cs.CoreV1().Pods(pod.Namespace).GetLogs(pod.Name, &corev1.PodLogOptions{Container: manifest.ManagerContainer}).DoRaw(ctx)
	Expect(err).NotTo(HaveOccurred())
	return string(out)
}

// deleteNamespaces deletes namespaces, with the installs and Memcached
// objects in them, and waits until they are gone: OLM's copies of the CSVs,
// the OperatorGroups that claim the Memcached API, and the pods.
func deleteNamespaces(ctx context.Context, namespaces ...string) {
	GinkgoHelper()
	// OLM's finalizer on a CSV holds a namespace that is being deleted,
	// and the namespace controller backs off, exponentially, while it
	// does: it looks again long after OLM has let go. So Subscriptions
	// and CSVs go first (OLM removes the copies of a CSV with it), and are
	// gone before the namespaces are deleted.
	copied, err := labels.NewRequirement("olm.copiedFrom", selection.DoesNotExist, nil)
	Expect(err).NotTo(HaveOccurred())
	notCopied := client.MatchingLabelsSelector{Selector: labels.NewSelector().Add(*copied)}
	for _, ns := range namespaces {
		Expect(k8s.DeleteAllOf(ctx, &operatorsv1alpha1.Subscription{}, client.InNamespace(ns))).To(Succeed())
		Expect(k8s.DeleteAllOf(ctx, &operatorsv1alpha1.ClusterServiceVersion{}, client.InNamespace(ns), notCopied)).To(Succeed())
	}
	eventually(ctx, func(g Gomega) {
		for _, ns := range namespaces {
			var csvs operatorsv1alpha1.ClusterServiceVersionList
			g.Expect(k8s.List(ctx, &csvs, client.InNamespace(ns), notCopied)).To(Succeed())
			g.Expect(csvs.Items).To(BeEmpty(), "CSVs in %s", ns)
		}
	}).Should(Succeed())
	for _, ns := range namespaces {
		Expect(client.IgnoreNotFound(k8s.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))).To(Succeed())
		// While pods are stopping, the namespace controller looks again
		// only after half their grace period (15 s for memcached's 30 s).
		// Nothing here needs a graceful stop, and a terminating namespace
		// admits no new pod: gone at once, its first look finds none.
		Expect(client.IgnoreNotFound(k8s.DeleteAllOf(ctx, &corev1.Pod{}, client.InNamespace(ns), client.GracePeriodSeconds(0)))).To(Succeed())
	}
	Eventually(func(g Gomega) {
		for _, ns := range namespaces {
			err := k8s.Get(ctx, client.ObjectKey{Name: ns}, &corev1.Namespace{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "namespace %s still there (err %v)", ns, err)
		}
	}).WithContext(ctx).WithTimeout(3 * time.Minute).WithPolling(500 * time.Millisecond).Should(Succeed())
}

// processEnv is the environment of the manager process of pod, as
// kubelet resolved it (plain values, OLM's downward-API references), read
// from the host.
func processEnv(ctx context.Context, pod *corev1.Pod) map[string]string {
	GinkgoHelper()
	i := slices.IndexFunc(pod.Status.ContainerStatuses, func(s corev1.ContainerStatus) bool { return s.Name == manifest.ManagerContainer })
	Expect(i).NotTo(BeNumerically("<", 0), "pod %s has no %s container status", pod.Name, manifest.ManagerContainer)
	pid, err := cluster.local.ContainerPID(ctx, pod.Status.ContainerStatuses[i].ContainerID)
	Expect(err).NotTo(HaveOccurred())
	env, err := process.ReadEnviron(pid)
	Expect(err).NotTo(HaveOccurred())
	return env
}

// memcachedPodUIDs are the pods of a Memcached's Deployment, name to UID.
func memcachedPodUIDs(ctx context.Context, g Gomega, mc *cachev1.Memcached) map[string]types.UID {
	d := &appsv1.Deployment{}
	g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(mc), d)).To(Succeed())
	var pods corev1.PodList
	g.Expect(k8s.List(ctx, &pods, client.InNamespace(mc.Namespace), client.MatchingLabels(d.Spec.Selector.MatchLabels))).To(Succeed())
	out := map[string]types.UID{}
	for _, p := range pods.Items {
		out[p.Name] = p.UID
	}
	return out
}

// expectReconciledWithProxy waits until the Memcached's Deployment has
// size ready pods and every container of its pod template carries the six
// proxy variables with the cluster proxy's values, except the metrics
// exporter, which speaks to memcached on loopback alone and carries none.
func expectReconciledWithProxy(ctx context.Context, mc *cachev1.Memcached, size int32) *appsv1.Deployment {
	GinkgoHelper()
	d := &appsv1.Deployment{}
	Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(mc), d)).To(Succeed())
		g.Expect(d.Status.ReadyReplicas).To(Equal(size))
		containers := slices.Concat(d.Spec.Template.Spec.InitContainers, d.Spec.Template.Spec.Containers)
		g.Expect(containers).NotTo(BeEmpty())
		for _, c := range containers {
			if c.Name == monitoring.ExporterContainer {
				g.Expect(proxyVars(c.Env)).To(BeEmpty(), "container %s", c.Name)
				continue
			}
			g.Expect(proxyVars(c.Env)).To(Equal(memcachedProxyEnv()), "container %s", c.Name)
		}
	}).WithContext(ctx).WithTimeout(2 * time.Minute).Should(Succeed())
	return d
}

// proxyVars are the env entries of env whose name is a proxy variable, in
// either case.
func proxyVars(env []corev1.EnvVar) map[string]string {
	out := map[string]string{}
	for _, e := range env {
		if _, ok := memcachedProxyEnv()[e.Name]; ok {
			out[e.Name] = e.Value
		}
	}
	return out
}

// The Secret the bundle's metrics Service asks OpenShift's service CA for
// (annotation service.beta.openshift.io/serving-cert-secret-name), which
// the manager mounts as an optional volume, and the metrics port.
// (metricsCertSecret, beside config/default's names).
const metricsPort = 8443

// expectMetricsCertificateFromServiceCA plays OpenShift's service CA, which
// does not run here: it issues a certificate for the metrics Service's DNS
// names into the Secret the Service names, as service-ca-operator does, and
// checks that the running manager pod, started without that Secret, first
// serves a certificate a scraper cannot verify and then, once kubelet has
// filled the optional volume, one that verifies for the Service's name
// against that CA, without a restart.
func expectMetricsCertificateFromServiceCA(ctx context.Context, in install, pod *corev1.Pod) {
	GinkgoHelper()
	now := time.Now()
	ca, err := certs.NewCA("openshift-service-serving-signer (test)", now.Add(-time.Minute), now.Add(time.Hour))
	Expect(err).NotTo(HaveOccurred())
	addr := net.JoinHostPort(pod.Status.PodIP, strconv.Itoa(metricsPort))
	serverName := metricsService + "." + in.namespace + ".svc"

	By(in.String() + ": without the service CA's Secret the manager runs, serving a certificate no scraper can verify")
	_, err = servedCertificate(ctx, addr, serverName, ca.CertPEM)
	Expect(err).To(MatchError(ContainSubstring("tls: failed to verify certificate")))

	By(in.String() + ": once the Secret exists the manager serves it, verified for <service>.<namespace>.svc")
	certPEM, keyPEM, err := ca.Issue(x509.Certificate{
		Subject:     pkix.Name{CommonName: serverName},
		DNSNames:    []string{serverName, serverName + ".cluster.local"},
		NotBefore:   now.Add(-time.Minute),
		NotAfter:    now.Add(time.Hour),
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	})
	Expect(err).NotTo(HaveOccurred())
	Expect(k8s.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: in.namespace, Name: metricsCertSecret},
		Type:       corev1.SecretTypeTLS,
		Data:       map[string][]byte{corev1.TLSCertKey: certPEM, corev1.TLSPrivateKeyKey: keyPEM},
	})).To(Succeed())
	start := time.Now()
	// Kubelet fills an optional Secret volume at its next sync of the pod,
	// about a minute later; the manager looks every few seconds.
	Eventually(func() error {
		_, err := servedCertificate(ctx, addr, serverName, ca.CertPEM)
		return err
	}).WithContext(ctx).WithTimeout(3 * time.Minute).WithPolling(time.Second).Should(Succeed())
	GinkgoWriter.Printf("%s: the service CA's certificate served %s after the Secret was created\n", in, time.Since(start).Round(time.Second))

	current := &corev1.Pod{}
	Expect(k8s.Get(ctx, client.ObjectKeyFromObject(pod), current)).To(Succeed())
	Expect(current.UID).To(Equal(pod.UID), "the same manager pod")
	Expect(localcluster.ContainerStatus(current, manifest.ManagerContainer).RestartCount).To(BeZero(), "manager restarts")
}

// access is one request the manager makes; name is the object's, for a
// rule that names its objects.
type access struct {
	verb, group, resource, subresource, name string
}

func (a access) String() string {
	r := a.resource
	if a.subresource != "" {
		r += "/" + a.subresource
	}
	if a.group != "" {
		r += "." + a.group
	}
	if a.name != "" {
		r += " " + a.name
	}
	return a.verb + " " + r
}

// managerAccess is what the manager does in a namespace it watches: read
// Memcached objects and patch their status, apply its Deployments, Services
// and PDBs (and delete a PDB when a Memcached shrinks to one pod), read pods,
// and record events.
var managerAccess = []access{
	{verb: "list", group: "cache.example.com", resource: "memcacheds"},
	{verb: "watch", group: "cache.example.com", resource: "memcacheds"},
	{verb: "patch", group: "cache.example.com", resource: "memcacheds", subresource: "status"},
	{verb: "create", group: "apps", resource: "deployments"},
	{verb: "patch", group: "apps", resource: "deployments"},
	{verb: "patch", resource: "services"},
	{verb: "delete", group: "policy", resource: "poddisruptionbudgets"},
	{verb: "watch", resource: "pods"},
	{verb: "create", group: "events.k8s.io", resource: "events"},
}

// ownNamespaceAccess is what the manager does in its own namespace only:
// lead (the Lease and its event), keep its pods' NetworkPolicies
// (controllers/ingresspolicy) and, only under OLM, make its Deployment
// an owner of OLM's webhook certificate Secret (certs.KeepOLMSecret: the
// pod's ReplicaSet, then the Secret) and read its Subscription at start
// (cmd/manager/app/subscription_config.go).
var ownNamespaceAccess = []access{
	{verb: "update", group: "coordination.k8s.io", resource: "leases"},
	{verb: "create", resource: "events"},
	{verb: "watch", group: "networking.k8s.io", resource: "networkpolicies"},
	{verb: "patch", group: "networking.k8s.io", resource: "networkpolicies"},
	{verb: "get", resource: "secrets", name: webhookService + "-cert"},
	{verb: "patch", resource: "secrets", name: webhookService + "-cert"},
	{verb: "get", group: "apps", resource: "replicasets"},
	{verb: "list", group: "operators.coreos.com", resource: "subscriptions"},
}

// otherSecret is a Secret the manager may read nowhere, its own namespace
// included.
var otherSecret = access{verb: "get", resource: "secrets", name: "someone-elses"}

// clusterAccess is what the manager does cluster-wide: check the callers of
// its metrics endpoint, and read the cluster's TLS security profile, which
// lives in a cluster-scoped object.
var clusterAccess = []access{
	{verb: "create", group: "authentication.k8s.io", resource: "tokenreviews"},
	{verb: "create", group: "authorization.k8s.io", resource: "subjectaccessreviews"},
	{verb: "get", group: "config.openshift.io", resource: "apiservers"},
	{verb: "watch", group: "config.openshift.io", resource: "apiservers"},
}

// clusterRule is each rule the manager may hold cluster-wide: the metrics
// reviews, and the read of the APIServer object.
var clusterRule = Or(
	And(HaveField("Verbs", Equal([]string{"create"})),
		HaveField("Resources", HaveEach(BeElementOf("tokenreviews", "subjectaccessreviews")))),
	And(HaveField("APIGroups", Equal([]string{"config.openshift.io"})),
		HaveField("Resources", Equal([]string{"apiservers"})),
		HaveField("Verbs", Equal([]string{"get", "list", "watch"}))))

// serviceAccount is the manager's ServiceAccount in the install's namespace.
type serviceAccount struct{ namespace, name string }

func (in install) serviceAccount() serviceAccount {
	return serviceAccount{namespace: in.namespace, name: serviceAccountName}
}

// can asks the API server's authorizer whether sa may make request a in
// namespace ("" for every namespace, or for a cluster-scoped resource).
func can(ctx context.Context, sa serviceAccount, a access, namespace string) bool {
	GinkgoHelper()
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		// How the API server names a ServiceAccount's token.
		User:   "system:serviceaccount:" + sa.namespace + ":" + sa.name,
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + sa.namespace, "system:authenticated"},
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Namespace: namespace, Verb: a.verb, Group: a.group, Resource: a.resource, Subresource: a.subresource, Name: a.name,
		},
	}}
	Expect(k8s.Create(ctx, sar)).To(Succeed())
	return sar.Status.Allowed
}

// clusterRules are the rules of every ClusterRole bound to sa by a
// ClusterRoleBinding: what it may do cluster-wide.
func clusterRules(ctx context.Context, sa serviceAccount) []rbacv1.PolicyRule {
	GinkgoHelper()
	var bindings rbacv1.ClusterRoleBindingList
	Expect(k8s.List(ctx, &bindings)).To(Succeed())
	var rules []rbacv1.PolicyRule
	for _, b := range bindings.Items {
		for _, s := range b.Subjects {
			if s.Kind != rbacv1.ServiceAccountKind || s.Namespace != sa.namespace || s.Name != sa.name {
				continue
			}
			Expect(b.RoleRef.Kind).To(Equal("ClusterRole"), "binding %s", b.Name)
			role := &rbacv1.ClusterRole{}
			Expect(k8s.Get(ctx, client.ObjectKey{Name: b.RoleRef.Name}, role)).To(Succeed(), fmt.Sprintf("ClusterRole %s", b.RoleRef.Name))
			rules = append(rules, role.Rules...)
		}
	}
	return rules
}

// expectOwnNamespaceRulesThereOnly checks that the install's
// ServiceAccount holds ownNamespaceAccess in the install's namespace, where
// OLM created the bundle's Roles, and in none of elsewhere, nor
// cluster-wide: not in the target namespaces, where OLM copies the CSV's
// permissions, and not in AllNamespaces mode, where it lifts them to
// ClusterRoles.
func expectOwnNamespaceRulesThereOnly(ctx context.Context, in install, elsewhere []string) {
	GinkgoHelper()
	sa := in.serviceAccount()
	for _, a := range ownNamespaceAccess {
		Expect(can(ctx, sa, a, in.namespace)).To(BeTrue(), "%s: %s in its own namespace", in, a)
		for _, ns := range append(elsewhere, metav1.NamespaceAll) {
			Expect(can(ctx, sa, a, ns)).To(BeFalse(), "%s: %s in namespace %q", in, a, ns)
		}
	}
	Expect(can(ctx, sa, otherSecret, in.namespace)).To(BeFalse(), "%s: %s in its own namespace", in, otherSecret)
}

// expectNetworkPolicies checks the NetworkPolicies the manager keeps beside
// its pod (package ingresspolicy), however it was installed: in the pod's
// namespace they select the pod and admit only the webhook port, from any
// source, and the metrics port, from namespaces labelled metrics: enabled;
// they are owned by the manager's Deployment, so uninstalling removes them;
// one deleted comes back. Namespaces elsewhere hold none. No CNI plugin on
// this cluster enforces them: this proves the objects, not the filtering
// (docs/olm.md).
func expectNetworkPolicies(ctx context.Context, install string, pod *corev1.Pod, elsewhere []string) {
	GinkgoHelper()
	By(install + ": the manager's NetworkPolicies select its pod and admit only the webhook and metrics ports")
	ns := pod.Namespace
	c, err := manifest.ManagerIn(pod.Spec.Containers)
	Expect(err).NotTo(HaveOccurred())
	Expect(c.Ports).To(ContainElement(HaveField("ContainerPort", int32(webhookPort))), "%s: the manager's ports", install)
	svc := &corev1.Service{}
	Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: metricsService}, svc)).To(Succeed())
	Expect(svc.Spec.Ports).To(HaveLen(1))
	var d appsv1.Deployment
	Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: operatorDeployment}, &d)).To(Succeed())

	kept := func(g Gomega) {
		var policies networkingv1.NetworkPolicyList
		g.Expect(k8s.List(ctx, &policies, client.InNamespace(ns))).To(Succeed())
		admitted, err := netpolicy.AdmittedIngress(policies.Items, pod.Labels)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(admitted).To(Equal(map[string][]string{
			fmt.Sprintf("TCP/%d", webhookPort):                             {netpolicy.AnySource},
			fmt.Sprintf("TCP/%d", svc.Spec.Ports[0].TargetPort.IntValue()): {"namespaces{metrics=enabled}"},
		}), "%s: what the NetworkPolicies admit into pod %s", install, pod.Name)
		for _, p := range policies.Items {
			g.Expect(p.OwnerReferences).To(ConsistOf(HaveField("UID", d.UID)), "%s: owners of NetworkPolicy %s", install, p.Name)
		}
	}
	eventually(ctx, kept).Should(Succeed())
	Expect(k8s.Delete(ctx, &networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: ingresspolicy.WebhookPolicy}})).To(Succeed())
	eventually(ctx, kept).Should(Succeed(), "%s: the deleted webhook policy back", install)

	for _, other := range elsewhere {
		var policies networkingv1.NetworkPolicyList
		Expect(k8s.List(ctx, &policies, client.InNamespace(other))).To(Succeed())
		Expect(policies.Items).To(BeEmpty(), "%s: NetworkPolicies in %s", install, other)
	}
}
