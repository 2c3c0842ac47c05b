package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	scapiv1alpha3 "github.com/operator-framework/api/pkg/apis/scorecard/v1alpha3"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/example-inc/memcached-operator/hack/local-cluster/images"
	"github.com/example-inc/memcached-operator/test/framework/harness"
	"github.com/example-inc/memcached-operator/test/framework/manifest"
)

// scorecardNamespace is where scorecard runs its test pods.
const scorecardNamespace = "scorecard"

// waitTime is scorecard's --wait-time for all the tests together: each
// pod starts in seconds, but a loaded two-core machine can take a minute.
const waitTime = 5 * time.Minute

var _ = Describe("operator-sdk scorecard", Label(labelHost, labelScorecard), func() {
	It("passes every test of the bundle's scorecard configuration on the real node", func(ctx SpecContext) {
		harness.RequireTools("operator-sdk")
		config := readConfig(filepath.Join(manifest.BundleDir, "tests", "scorecard", "config.yaml"))
		testImage := onlyImage(config)

		start := time.Now()
		img, err := images.ScorecardTest(ctx, filepath.Join(workDir, "images"), testImage)
		Expect(err).NotTo(HaveOccurred())
		Expect(cluster.local.ImportImages(ctx, img.Archive)).To(Succeed())
		AddReportEntry("scorecard-test image built and imported", time.Since(start).Round(time.Millisecond).String())
		cluster.restrictedNamespace(ctx, scorecardNamespace)
		// The pods run as the namespace's default ServiceAccount, which
		// kube-controller-manager creates.
		eventually(ctx, func() error {
			return k8s.Get(ctx, client.ObjectKey{Namespace: scorecardNamespace, Name: "default"}, &corev1.ServiceAccount{})
		}).Should(Succeed())

		start = time.Now()
		var stdout, stderr bytes.Buffer
		cmd := exec.CommandContext(ctx, harness.Tool("operator-sdk"), "scorecard", manifest.BundleDir,
			"--kubeconfig", cluster.KubeconfigPath(),
			"--namespace", scorecardNamespace,
			"--pod-security", "restricted",
			"--untar-image", images.BusyboxTag,
			"--storage-image", images.BusyboxTag,
			"--wait-time", waitTime.String(),
			"--output", "json")
		cmd.Dir = workDir
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		// scorecard exits 1 when a test fails: the results say which.
		runErr := cmd.Run()
		AddReportEntry("operator-sdk scorecard ran", time.Since(start).Round(time.Millisecond).String())
		GinkgoWriter.Printf("operator-sdk scorecard:\n%s\n%s\n", stdout.String(), stderr.String())
		var results scapiv1alpha3.TestList
		Expect(json.Unmarshal(stdout.Bytes(), &results)).To(Succeed(), "scorecard's output:\n%s\n%s", stdout.String(), stderr.String())

		var ran []string
		for _, item := range results.Items {
			Expect(item.Status.Results).NotTo(BeEmpty(), "test %s has no result", item.Spec.Labels["test"])
			for _, r := range item.Status.Results {
				ran = append(ran, item.Spec.Labels["test"])
				Expect(r.State).To(Equal(scapiv1alpha3.PassState),
					"scorecard test %s (%s): errors %v, suggestions %v, log:\n%s", r.Name, item.Spec.Labels["test"], r.Errors, r.Suggestions, r.Log)
			}
		}
		Expect(runErr).NotTo(HaveOccurred(), stderr.String())
		slices.Sort(ran)
		Expect(ran).To(Equal(configuredTests(config)), "every configured test ran, once")
	})
})

// readConfig reads a scorecard configuration file.
func readConfig(path string) scapiv1alpha3.Configuration {
	GinkgoHelper()
	data, err := os.ReadFile(path)
	Expect(err).NotTo(HaveOccurred())
	var c scapiv1alpha3.Configuration
	Expect(yaml.UnmarshalStrict(data, &c)).To(Succeed())
	return c
}

// onlyImage is the one test image every test of c runs: the real node
// needs it imported under that name, since it pulls nothing.
func onlyImage(c scapiv1alpha3.Configuration) string {
	GinkgoHelper()
	var refs []string
	for _, s := range c.Stages {
		for _, t := range s.Tests {
			if !slices.Contains(refs, t.Image) {
				refs = append(refs, t.Image)
			}
		}
	}
	Expect(refs).To(HaveLen(1), "the scorecard tests' images; package images builds only operator-sdk's scorecard-test")
	return refs[0]
}

// configuredTests is the test label of every test of c, sorted.
func configuredTests(c scapiv1alpha3.Configuration) []string {
	var out []string
	for _, s := range c.Stages {
		for _, t := range s.Tests {
			out = append(out, t.Labels["test"])
		}
	}
	slices.Sort(out)
	return out
}
