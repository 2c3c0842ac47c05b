package bundle

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/example-inc/memcached-operator/hack/repo"
	"github.com/example-inc/memcached-operator/test/framework/manifest"
	"github.com/example-inc/memcached-operator/webhooks"
)

// The CSV's claims about the operator. Each one is checked here so that
// changing it takes a deliberate edit with its reason.
func TestCSVAnnotations(t *testing.T) {
	csv := loadBundle(t).CSV
	manager := managerIn(t, managerPod(t, csv))
	tests := []struct {
		key, want, why string
	}{
		{"features.operators.openshift.io/proxy-aware", "true",
			"the operator carries OLM's HTTP_PROXY, HTTPS_PROXY and NO_PROXY into every memcached container (controllers/proxyenv)"},
		{"features.operators.openshift.io/disconnected", "true",
			"relatedImages lists every image and the operand image comes from RELATED_IMAGE_MEMCACHED; release bundles pin digests (USE_IMAGE_DIGESTS=true)"},
		{"features.operators.openshift.io/fips-compliant", "false",
			"the manager and the TLS reloader run Go's validated Cryptographic Module in FIPS 140-3 mode " +
				"(TestImageBinariesCarryTheFIPSModule; the end-to-end suite's \"the operator under GODEBUG=fips140=only\"), but the annotation means that the operator " +
				"and its operands solely call RHEL's validated library: with spec.tls, memcached's TLS is its image's OpenSSL " +
				"(docker.io/library/memcached, Alpine's), and the operator's own module is Go's, not RHEL's; docs/fips.md"},
		{"features.operators.openshift.io/tls-profiles", "true",
			"the webhook and metrics servers follow the APIServer tlsSecurityProfile, watched, Intermediate without it " +
				"(the end-to-end suite's \"the operator's servers under the cluster's TLS profile\"), and memcached's TLS follows it (test/controllers/cluster_tls_test.go)"},
		{"features.operators.openshift.io/token-auth-aws", "false", "the operator calls no cloud API"},
		{"features.operators.openshift.io/token-auth-azure", "false", "the operator calls no cloud API"},
		{"features.operators.openshift.io/token-auth-gcp", "false", "the operator calls no cloud API"},
		{"features.operators.openshift.io/cnf", "false", "not a cloud-native network function"},
		{"features.operators.openshift.io/cni", "false", "provides no CNI plugin"},
		{"features.operators.openshift.io/csi", "false", "provides no CSI driver"},
		// Level 4 includes level 3's proofs, which still run.
		{"capabilities", "Deep Insights",
			"test/e2e reads each pod's exporter counting exactly the commands sent, with TLS too; the controllers suite " +
				"keeps, repairs and removes each Memcached's PodMonitor and PrometheusRule; controllers/monitoring runs every " +
				"alert's promtool tests and checks its runbook; test/e2e scrapes the operator as its ServiceMonitor says. " +
				"Seamless Upgrades: test/e2e upgrades the operator through OLM with memcached pods running on a real node, " +
				"which keep running, while admission answers every write"},
		{"categories", "Database", "memcached is an in-memory key-value store"},
		{"repository", "https://github.com/example-inc/memcached-operator", "the source"},
		{"containerImage", manager.Image, "the image the manager Deployment runs"},
	}
	for _, tt := range tests {
		if got := csv.Annotations[tt.key]; got != tt.want {
			t.Errorf("annotation %s = %q, want %q: %s", tt.key, got, tt.want, tt.why)
		}
	}
	if _, err := time.Parse(time.RFC3339, csv.Annotations["createdAt"]); err != nil {
		t.Errorf("createdAt %q is not an RFC 3339 time: %v", csv.Annotations["createdAt"], err)
	}
}

// Every install mode: the operator watches what WATCH_NAMESPACE (OLM's
// olm.targetNamespaces) names, OLM scopes its admission webhooks to the
// OperatorGroup's namespaces (it forces AllNamespaces only on conversion
// webhooks, which this operator has none of), and its namespaced rules
// become Roles there (TestPermissionsAreNamespaced). test/e2e installs it in
// each mode.
func TestInstallModesAreAll(t *testing.T) {
	csv := loadBundle(t).CSV
	got := map[v1alpha1.InstallModeType]bool{}
	for _, m := range csv.Spec.InstallModes {
		got[m.Type] = m.Supported
	}
	for _, mode := range []v1alpha1.InstallModeType{
		v1alpha1.InstallModeTypeOwnNamespace, v1alpha1.InstallModeTypeSingleNamespace,
		v1alpha1.InstallModeTypeMultiNamespace, v1alpha1.InstallModeTypeAllNamespaces,
	} {
		if !got[mode] {
			t.Errorf("install mode %s not supported", mode)
		}
	}
	for _, w := range csv.Spec.WebhookDefinitions {
		if w.Type == v1alpha1.ConversionWebhook {
			t.Errorf("webhook %s is a conversion webhook: OLM installs those in AllNamespaces only", w.GenerateName)
		}
	}
}

// The manager's rules (config/rbac/role.yaml, from the +kubebuilder:rbac
// markers) and the leader election's are the CSV's namespaced permissions,
// which OLM grants as Roles in the operator's and the target namespaces and
// lifts to ClusterRoles only for AllNamespaces. Cluster-wide the manager
// holds nothing but the reviews its metrics endpoint makes and the read of
// the cluster's TLS security profile.
func TestPermissionsAreNamespaced(t *testing.T) {
	csv := loadBundle(t).CSV
	strategy := csv.Spec.InstallStrategy.StrategySpec
	var managerRole rbacv1.ClusterRole
	readYAML(t, filepath.Join(repo.Root(), "config", "rbac", "role.yaml"), &managerRole)

	var namespaced []rbacv1.PolicyRule
	for _, p := range strategy.Permissions {
		namespaced = append(namespaced, p.Rules...)
	}
	for _, want := range managerRole.Rules {
		if !slices.ContainsFunc(namespaced, func(r rbacv1.PolicyRule) bool { return equality.Semantic.DeepEqual(r, want) }) {
			t.Errorf("the manager's rule %+v is not among the CSV's namespaced permissions", want)
		}
	}
	metrics := []rbacv1.PolicyRule{
		{APIGroups: []string{"authentication.k8s.io"}, Resources: []string{"tokenreviews"}, Verbs: []string{"create"}},
		{APIGroups: []string{"authorization.k8s.io"}, Resources: []string{"subjectaccessreviews"}, Verbs: []string{"create"}},
		{APIGroups: []string{"config.openshift.io"}, Resources: []string{"apiservers"}, Verbs: []string{"get", "list", "watch"}},
	}
	var cluster []rbacv1.PolicyRule
	for _, p := range strategy.ClusterPermissions {
		cluster = append(cluster, p.Rules...)
	}
	if !equality.Semantic.DeepEqual(cluster, metrics) {
		t.Errorf("the CSV's clusterPermissions are %+v, want only the metrics reviews and the TLS profile %+v", cluster, metrics)
	}
}

// The manager Deployment runs on what OLM provides: no cert-manager volume
// (OLM mounts its own webhook certificate at the same path, and a second
// volume there would make the pod invalid), the metrics certificate only
// from the optional Secret OpenShift's service CA writes (so the pod starts
// where nothing writes it), and every argument config/manager gives it,
// which proves config/manifests removed nothing else.
func TestManagerDeploymentRunsOnOLMCertificate(t *testing.T) {
	csv := loadBundle(t).CSV
	pod := managerPod(t, csv)
	manager := managerIn(t, pod)

	wantVolume := corev1.Volume{Name: "metrics-certs", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
		SecretName: metricsServiceCASecret, Optional: ptr.To(true),
	}}}
	if !equality.Semantic.DeepEqual(pod.Volumes, []corev1.Volume{wantVolume}) {
		t.Errorf("volumes %+v, want only %+v: OLM adds the webhook certificate volume itself, and the "+
			"service CA's Secret holds no ca.crt for an items list to name", pod.Volumes, wantVolume)
	}
	wantMount := corev1.VolumeMount{Name: wantVolume.Name, MountPath: metricsCertDir, ReadOnly: true}
	for _, c := range append(pod.InitContainers, pod.Containers...) {
		for _, m := range c.VolumeMounts {
			if c.Name != manager.Name || !equality.Semantic.DeepEqual(m, wantMount) {
				t.Errorf("container %s mounts %+v: the bundle mounts only %+v in the manager", c.Name, m, wantMount)
			}
		}
	}
	if !slices.Contains(manager.Args, "--metrics-cert-path="+metricsCertDir) {
		t.Errorf("args %q: no --metrics-cert-path=%s", manager.Args, metricsCertDir)
	}
	for _, a := range manager.Args {
		name, value, _ := strings.Cut(a, "=")
		switch {
		case name == "--webhook-cert-mode" && value != "mounted":
			t.Errorf("arg %q: under OLM the webhook certificate is the mounted one", a)
		case strings.HasPrefix(name, "--webhook-cert") && strings.HasPrefix(value, "/") && value != olmWebhookCertDir:
			t.Errorf("arg %q: OLM mounts the webhook certificate at %s", a, olmWebhookCertDir)
		}
	}

	base := managerFromConfig(t)
	for _, a := range base.Args {
		if !slices.Contains(manager.Args, a) {
			t.Errorf("arg %q of config/manager/manager.yaml is missing from the bundle's manager", a)
		}
	}
	if manager.Image == "" || manager.Image == base.Image {
		t.Errorf("manager image %q: make bundle sets it from IMG", manager.Image)
	}

	env := map[string]corev1.EnvVar{}
	for _, e := range manager.Env {
		env[e.Name] = e
	}
	watch := env["WATCH_NAMESPACE"]
	if watch.ValueFrom == nil || watch.ValueFrom.FieldRef == nil ||
		watch.ValueFrom.FieldRef.FieldPath != "metadata.annotations['olm.targetNamespaces']" {
		t.Errorf("WATCH_NAMESPACE = %+v, want the olm.targetNamespaces annotation", watch)
	}
	// OLM injects the cluster's proxy; a value in the CSV would hide it.
	for _, name := range []string{"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy"} {
		if _, ok := env[name]; ok {
			t.Errorf("the CSV sets %s: leave the proxy variables to OLM", name)
		}
	}
}

// The manager takes the Go runtime's soft memory limit from MEMORY_LIMIT
// (cmd/manager/app/memory_limit.go), which must be its own container's limit in bytes, in
// config/manager and in the CSV OLM installs; without it a flood can grow
// the heap past the limit before the collector runs, and the pod is killed.
func TestManagerIsToldItsMemoryLimit(t *testing.T) {
	for where, manager := range map[string]corev1.Container{
		managerManifest: managerFromConfig(t),
		"the CSV":       managerIn(t, managerPod(t, loadBundle(t).CSV)),
	} {
		if manager.Resources.Limits.Memory().IsZero() {
			t.Errorf("%s: the manager has no memory limit", where)
		}
		want := &corev1.ResourceFieldSelector{ContainerName: manifest.ManagerContainer, Resource: "limits.memory", Divisor: resource.MustParse("1")}
		i := slices.IndexFunc(manager.Env, func(e corev1.EnvVar) bool { return e.Name == "MEMORY_LIMIT" })
		if i < 0 || manager.Env[i].ValueFrom == nil || !equality.Semantic.DeepEqual(manager.Env[i].ValueFrom.ResourceFieldRef, want) {
			t.Errorf("%s: MEMORY_LIMIT is %+v, want the manager's limits.memory in bytes", where, manager.Env)
		}
	}
}

// managerFromConfig reads the manager container of config/manager.
func managerFromConfig(t *testing.T) corev1.Container {
	t.Helper()
	for _, u := range readObjects(t, managerManifest) {
		if u.GetKind() != "Deployment" {
			continue
		}
		var d appsv1.Deployment
		fromUnstructured(t, u, &d)
		return managerIn(t, d.Spec.Template.Spec)
	}
	t.Fatalf("%s holds no Deployment", managerManifest)
	return corev1.Container{}
}

// relatedImages lists every image the operator runs or deploys, so that
// mirroring the catalog for a disconnected cluster mirrors them all.
func TestRelatedImagesListEveryImage(t *testing.T) {
	csv := loadBundle(t).CSV
	related := map[string]string{} // image -> name
	for _, r := range csv.Spec.RelatedImages {
		if r.Name == "" || r.Image == "" {
			t.Errorf("related image %+v has an empty name or image", r)
		}
		related[r.Image] = r.Name
	}
	for _, d := range csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs {
		pod := d.Spec.Template.Spec
		for _, c := range append(pod.InitContainers, pod.Containers...) {
			if _, ok := related[c.Image]; !ok {
				t.Errorf("container %s/%s runs %s, which relatedImages does not list", d.Name, c.Name, c.Image)
			}
			for _, e := range c.Env {
				if strings.HasPrefix(e.Name, "RELATED_IMAGE_") {
					// operator-sdk's name: the suffix in lower case, "_" as "-".
					want := strings.ReplaceAll(strings.ToLower(strings.TrimPrefix(e.Name, "RELATED_IMAGE_")), "_", "-")
					if got, ok := related[e.Value]; !ok || got != want {
						t.Errorf("%s=%s: relatedImages has it as %q (listed %v), want %q", e.Name, e.Value, got, ok, want)
					}
				}
			}
		}
	}
}

// OLM creates a Service for the webhook definitions (<deployment>-service);
// the bundle ships no second one in front of the webhook port.
func TestBundleShipsNoWebhookService(t *testing.T) {
	for _, u := range bundleObjects(t) {
		if u.GetKind() != "Service" {
			continue
		}
		var svc corev1.Service
		fromUnstructured(t, u, &svc)
		for _, p := range svc.Spec.Ports {
			if p.TargetPort == intstr.FromInt32(9443) || p.Port == 443 {
				t.Errorf("%s: Service %s serves the webhook port; OLM creates that Service",
					filepath.Base(manifest.BundleDir), svc.Name)
			}
		}
	}
}

// The description tells the cluster admin facts that live elsewhere: keep
// them in step.
func TestDescriptionStatesCurrentFacts(t *testing.T) {
	csv := loadBundle(t).CSV
	manager := managerIn(t, managerPod(t, csv))
	var image string
	for _, e := range manager.Env {
		if e.Name == "RELATED_IMAGE_MEMCACHED" {
			image = e.Value
		}
	}
	var delay time.Duration
	for _, a := range manager.Args {
		if v, ok := strings.CutPrefix(a, "--shutdown-delay="); ok {
			d, err := time.ParseDuration(v)
			if err != nil {
				t.Fatalf("%s: %v", a, err)
			}
			delay = d
		}
	}
	// Compare with the line breaks of the YAML block folded into spaces.
	description := strings.Join(strings.Fields(csv.Spec.Description), " ")
	p := webhooks.DefaultSizePolicy()
	req, lim := manager.Resources.Requests, manager.Resources.Limits
	for _, want := range []string{
		"`" + image + "`",
		fmt.Sprintf("gets %d pods, and sizes from %d to %d are admitted", p.Default, p.Min, p.Max),
		fmt.Sprintf("needs %s CPU and %s of memory (limits %s and %s)",
			req.Cpu(), req.Memory(), lim.Cpu(), lim.Memory()),
		fmt.Sprintf("keeps serving for %d seconds after it is told to stop", int(delay.Seconds())),
	} {
		if !strings.Contains(description, want) {
			t.Errorf("the CSV description does not say %q; update config/manifests/bases", want)
		}
	}
}

// TestSpecDescriptorsCoverTheSpec: the OpenShift console builds its form for
// a new Memcached from the CSV's spec descriptors, so a spec field without
// one cannot be set there without editing YAML.
func TestSpecDescriptorsCoverTheSpec(t *testing.T) {
	b := loadBundle(t)
	described := map[string]bool{}
	for _, owned := range b.CSV.Spec.CustomResourceDefinitions.Owned {
		for _, d := range owned.SpecDescriptors {
			described[d.Path] = true
		}
	}
	if len(b.V1CRDs) != 1 {
		t.Fatalf("%d CRDs in the bundle, want 1", len(b.V1CRDs))
	}
	spec := b.V1CRDs[0].Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
	if len(spec.Properties) < 11 {
		t.Fatalf("the CRD's spec has %d fields; expected size, memory, maxItemSize, maxConnections, threads, resources and placement", len(spec.Properties))
	}
	for field := range spec.Properties {
		if !described[field] {
			t.Errorf("spec.%s has no spec descriptor in the CSV", field)
		}
	}
}

// OpenShift's service CA issues the metrics certificate into the Secret the
// manager mounts: the bundle's metrics Service asks for it by name.
func TestMetricsServiceAsksForServiceCACertificate(t *testing.T) {
	const annotation = "service.beta.openshift.io/serving-cert-secret-name"
	for _, u := range bundleObjects(t) {
		if u.GetKind() == "Service" && u.GetName() == metricsService {
			if got := u.GetAnnotations()[annotation]; got != metricsServiceCASecret {
				t.Errorf("Service %s: annotation %s is %q, want %q", metricsService, annotation, got, metricsServiceCASecret)
			}
			return
		}
	}
	t.Errorf("no Service %s in the bundle", metricsService)
}
