package e2e

import (
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/example-inc/memcached-operator/api/v1/gen"
	"github.com/example-inc/memcached-operator/hack/local-cluster/process"
	"github.com/example-inc/memcached-operator/test/framework/harness"
	"github.com/example-inc/memcached-operator/test/framework/manifest"
	"github.com/example-inc/memcached-operator/test/framework/registrymirror"
	"github.com/example-inc/memcached-operator/test/framework/releasebundle"
)

// devRelatedImages are the committed bundle's relatedImages, by tag: the
// images a release publishes, under the names it publishes them.
func devRelatedImages() ([]operatorsv1alpha1.RelatedImage, error) {
	_, u, err := readBundleCSV(manifest.BundleDir)
	if err != nil {
		return nil, err
	}
	var csv operatorsv1alpha1.ClusterServiceVersion
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &csv); err != nil {
		return nil, err
	}
	return csv.Spec.RelatedImages, nil
}

// mirroredHosts are the registries of the bundle's images, as
// go-containerregistry names them.
func mirroredHosts() ([]string, error) {
	related, err := devRelatedImages()
	if err != nil {
		return nil, err
	}
	var hosts []string
	for _, r := range related {
		h, err := registrymirror.Host(r.Image)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(hosts, h) {
			hosts = append(hosts, h)
		}
	}
	return hosts, nil
}

// startMirror serves empty stand-ins for the bundle's registries.
func startMirror(dir string) (*registrymirror.Mirror, error) {
	hosts, err := mirroredHosts()
	if err != nil {
		return nil, err
	}
	return registrymirror.Start(dir, hosts...)
}

// containerdMirrors points each of the mirror's hosts, as containerd names
// it (docker.io, where go-containerregistry says index.docker.io), at its
// loopback endpoint.
func containerdMirrors(m *registrymirror.Mirror) map[string]string {
	hosts, err := mirroredHosts()
	Expect(err).NotTo(HaveOccurred())
	out := map[string]string{}
	for _, h := range hosts {
		c := h
		if h == name.DefaultRegistry {
			c = "docker.io"
		}
		out[c] = m.Endpoint(h)
	}
	return out
}

// mirroredLabel marks the mirror's copies of the images (ownImageID).
const mirroredLabel = "com.example.test.mirrored"

// ownImageID returns img with a label that gives it an image ID of its
// own. The other specs run the same builds under names imported onto the
// node, which no registry serves. Once the kubelet has pulled an image ID,
// it no longer counts it as preloaded: a pod that names it by another
// repository makes the kubelet pull it to verify credentials
// (KubeletEnsureSecretPulledImages, imagePullCredentialsVerificationPolicy
// NeverVerifyPreloadedImages), and that pull fails. Had this spec's pull
// of the exporter shared the ID of the imported localhost/memcached-exporter,
// the memcached pods of the specs after it would never become ready.
func ownImageID(img v1.Image) (v1.Image, error) {
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	c := *cf.Config.DeepCopy()
	if c.Labels == nil {
		c.Labels = map[string]string{}
	}
	c.Labels[mirroredLabel] = "true"
	return mutate.Config(img, c)
}

// pushedImage is an image the spec pushed to the mirror.
type pushedImage struct {
	tag    name.Tag
	digest string
}

// disconnectedInstallSpecs are the OLM container's disconnected install
// (olm_test.go).
func disconnectedInstallSpecs() {
	Describe("A disconnected install: the release bundle through OLM, every image pulled by digest from a mirror", Ordered, func() {
		const releaseCatalog = "memcached-operator-release"
		const ns = "memcached-disconnected"
		in := install{namespace: ns, targets: []string{ns}, catalog: releaseCatalog, asPublished: true}
		var (
			// pushed is each pushed image by its repository, as a digest
			// reference names it in full.
			pushed        = map[string]pushedImage{}
			afterPush     int
			catalogServer *process.Process
		)

		BeforeAll(func(ctx SpecContext) {
			dir := filepath.Join(workDir, "release")
			related, err := devRelatedImages()
			Expect(err).NotTo(HaveOccurred())
			start := time.Now()
			imgs, err := releasebundle.Images(ctx, filepath.Join(dir, "images"), related)
			Expect(err).NotTo(HaveOccurred())
			for ref, img := range imgs {
				i, err := tarball.ImageFromPath(img.Archive, nil)
				Expect(err).NotTo(HaveOccurred())
				i, err = ownImageID(i)
				Expect(err).NotTo(HaveOccurred())
				d, err := mirror.Push(ctx, ref, i)
				Expect(err).NotTo(HaveOccurred())
				tag, err := name.NewTag(ref)
				Expect(err).NotTo(HaveOccurred())
				pushed[tag.Context().Name()] = pushedImage{tag: tag, digest: d.String()}
			}
			GinkgoWriter.Printf("%d images built and pushed in %s\n", len(imgs), time.Since(start).Round(time.Millisecond))

			start = time.Now()
			releaseDir, err := releasebundle.Make(ctx, dir, mirror.ProxyEnv())
			Expect(err).NotTo(HaveOccurred())
			Expect(mirror.Refused()).To(BeEmpty(), "make bundle tried to reach a host that is not mirrored")
			GinkgoWriter.Printf("release bundle made in %s\n", time.Since(start).Round(time.Millisecond))
			afterPush = len(mirror.Requests())

			var address string
			catalogServer, address = serveCatalog(ctx, "release", releaseDir)
			createCatalogSource(ctx, releaseCatalog, address)
		}, NodeTimeout(6*time.Minute))

		// The install goes with its namespace, so that an AllNamespaces install
		// of the other specs may follow.
		AfterAll(func(ctx SpecContext) {
			deleteNamespaces(ctx, ns)
			Expect(client.IgnoreNotFound(k8s.Delete(ctx, &operatorsv1alpha1.CatalogSource{
				ObjectMeta: metav1.ObjectMeta{Namespace: olmNamespace, Name: releaseCatalog}}))).To(Succeed())
			if catalogServer != nil {
				Expect(catalogServer.Stop(30 * time.Second)).To(Succeed())
			}
		}, NodeTimeout(5*time.Minute))

		// expectPulledFromMirror checks that each container of pod runs the
		// image pushed under its repository, by digest, and that the mirror
		// served that manifest by digest.
		expectPulledFromMirror := func(pod *corev1.Pod) {
			GinkgoHelper()
			served := map[string]bool{}
			for _, r := range mirror.Requests()[afterPush:] {
				if repo, ref, ok := strings.Cut(strings.TrimPrefix(r.Path, "/v2/"), "/manifests/"); ok && r.Status == 200 {
					served[r.Host+"/"+repo+"@"+ref] = true
				}
			}
			// The image each container was created with, from the spec: the
			// status's image field may name the image by its ID instead.
			specImages := map[string]string{}
			for _, c := range slices.Concat(pod.Spec.InitContainers, pod.Spec.Containers) {
				specImages[c.Name] = c.Image
			}
			statuses := slices.Concat(pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses)
			Expect(statuses).To(HaveLen(len(specImages)))
			for _, c := range statuses {
				d, err := name.NewDigest(specImages[c.Name])
				Expect(err).NotTo(HaveOccurred(), "pod %s container %s runs %q, not a digest reference", pod.Name, c.Name, specImages[c.Name])
				p, ok := pushed[d.Context().Name()]
				Expect(ok).To(BeTrue(), "pod %s container %s runs %s, none of the pushed images", pod.Name, c.Name, specImages[c.Name])
				Expect(d.DigestStr()).To(Equal(p.digest), "pod %s container %s", pod.Name, c.Name)
				Expect(c.ImageID).To(HaveSuffix("@"+p.digest), "pod %s container %s: the image the node pulled", pod.Name, c.Name)
				key := p.tag.RegistryStr() + "/" + p.tag.RepositoryStr() + "@" + p.digest
				Expect(served).To(HaveKey(key), "pod %s container %s: the mirror served no manifest %s", pod.Name, c.Name, key)
				GinkgoWriter.Printf("pod %s container %s: %s, imageID %s, served by the mirror\n", pod.Name, c.Name, specImages[c.Name], c.ImageID)
			}
		}

		It("installs the release bundle from its own catalog, the operator pod pulled by digest from the mirror", func(ctx SpecContext) {
			in.subscribe(ctx)
			csv := in.expectInstalled(ctx, fromVersion)
			image := csv.Annotations["containerImage"]
			Expect(image).To(ContainSubstring("@sha256:"))
			pod := in.operatorPod(ctx, image)
			expectPulledFromMirror(pod)
		}, SpecTimeout(6*time.Minute))

		It("runs memcached with its TLS sidecar and metrics exporter, each pulled by digest from the mirror", func(ctx SpecContext) {
			const cache = "cache"
			cluster.tlsSecretFor(ctx, ns, cache)
			mc := gen.Memcached(ns, cache, gen.WithSize(1), gen.WithTLS(cache+"-tls"), gen.WithMonitoring(true))
			// The CSV succeeds before kube-proxy may route to the webhook
			// Service's endpoint: the first creates can find it refusing.
			Eventually(func() error { return k8s.Create(ctx, mc) }).
				WithContext(ctx).WithTimeout(time.Minute).WithPolling(200 * time.Millisecond).Should(Succeed())

			var pod corev1.Pod
			Eventually(func(g Gomega) {
				var pods corev1.PodList
				g.Expect(k8s.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels{"app.kubernetes.io/instance": cache})).To(Succeed())
				g.Expect(pods.Items).To(HaveLen(1))
				pod = pods.Items[0]
				g.Expect(harness.PodReady(&pod)).To(BeTrue(), "pod %s Ready", pod.Name)
				g.Expect(pod.Status.ContainerStatuses).To(HaveLen(3), "memcached, the TLS sidecar and the exporter")
			}).WithContext(ctx).WithTimeout(4 * time.Minute).WithPolling(500 * time.Millisecond).Should(Succeed())
			expectPulledFromMirror(&pod)
		}, SpecTimeout(6*time.Minute))

		It("asked the mirror for the pushed repositories alone, and nothing was refused", func() {
			repos := map[string]bool{}
			for _, p := range pushed {
				repos[p.tag.RegistryStr()+"/"+p.tag.RepositoryStr()] = true
			}
			for _, r := range mirror.Requests()[afterPush:] {
				if r.Path == "/v2/" {
					continue
				}
				repo, _, ok := strings.Cut(strings.TrimPrefix(r.Path, "/v2/"), "/manifests/")
				if !ok {
					repo, _, ok = strings.Cut(strings.TrimPrefix(r.Path, "/v2/"), "/blobs/")
				}
				Expect(ok && repos[r.Host+"/"+repo]).To(BeTrue(), "the mirror of %s was asked %s %s", r.Host, r.Method, r.Path)
				Expect(r.Method).To(BeElementOf("GET", "HEAD"), "the mirror of %s was asked %s %s", r.Host, r.Method, r.Path)
			}
			Expect(mirror.Refused()).To(BeEmpty())
		})
	})
}
