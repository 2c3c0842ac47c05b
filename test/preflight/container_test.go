package preflight

import (
	"bytes"
	"encoding/json"
	"encoding/pem"
	"io"
	"log"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/example-inc/memcached-operator/hack/local-cluster/images"
	"github.com/example-inc/memcached-operator/hack/repo"
)

// The policies of `preflight list-checks` the test reads: the one a
// `check container` without a Red Hat Connect project applies, and the one
// Red Hat applies to a project granted the scratch exception.
const (
	containerPolicy = "Container Policy"
	scratchPolicy   = "Container Scratch (NonRoot) Exception Policy"
)

// cannotPassHere are the container policy's checks that cannot pass on this
// image, and why. Each must end in preflight's errors or failures, and they
// must be exactly the checks the scratch exception leaves out; every other
// check must pass.
var cannotPassHere = map[string]string{
	"BasedOnUbi": "the image is built on distroless/static (the Dockerfile), not on Red Hat's UBI; " +
		"only Pyxis (catalog.redhat.com) can say whether a layer is a certified UBI layer, and " +
		"nothing here may reach it",
	"HasNoProhibitedPackages": "it lists the packages in the image's RPM database; the image has " +
		"no RPM database (a static binary, no package manager), which preflight reports as an error",
	"HasModifiedFiles": "it compares the files RPM installed in the base layer with the later " +
		"layers, from the RPM database and /etc/os-release of a Red Hat base the image does not have",
}

// operatorTag is the operator image's name in the loopback registry: not
// latest (HasUniqueTag) and no Red Hat name (HasProhibitedContainerName).
const operatorTag = "example-inc/memcached-operator:preflight"

// report is the part of preflight's JSON results the test reads.
type report struct {
	Image   string `json:"image"`
	Passed  bool   `json:"passed"`
	Results struct {
		Passed []checkResult `json:"passed"`
		Failed []checkResult `json:"failed"`
		Errors []checkResult `json:"errors"`
	} `json:"results"`
}

type checkResult struct {
	Name string `json:"name"`
}

func names(rs []checkResult) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Name)
	}
	slices.Sort(out)
	return out
}

// refuser answers every request with status and message, and records it.
type refuser struct {
	status  int
	message string
	mu      sync.Mutex
	seen    []string
}

func (r *refuser) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	r.seen = append(r.seen, req.Method+" "+req.Host+req.URL.Path)
	r.mu.Unlock()
	http.Error(w, r.message, r.status)
}

func (r *refuser) list() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.seen)
}

func TestOperatorImagePassesContainerPolicy(t *testing.T) {
	preflight := repo.Tool("preflight")
	if _, err := os.Stat(preflight); err != nil {
		t.Fatalf("%v: run make preflight", err)
	}
	ctx := t.Context()
	dir := t.TempDir()
	policies := listChecks(t, preflight)
	// A preflight bump that moves a check in or out of either policy fails
	// here, so that cannotPassHere is read again.
	var dropped []string
	for _, c := range policies[containerPolicy] {
		if !slices.Contains(policies[scratchPolicy], c) {
			dropped = append(dropped, c)
		}
	}
	if want := slices.Sorted(maps.Keys(cannotPassHere)); !slices.Equal(dropped, want) {
		t.Fatalf("the checks the scratch exception leaves out are %v; cannotPassHere names %v", dropped, want)
	}

	start := time.Now()
	img, err := images.Operator(ctx, filepath.Join(dir, "image"), "localhost/memcached-operator:preflight")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("operator image built in %s", time.Since(start).Round(time.Millisecond))

	reg := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(reg.Close)
	ref := strings.TrimPrefix(reg.URL, "http://") + "/" + operatorTag
	push(t, img.Archive, ref)

	// Pyxis, on loopback: preflight trusts its certificate through
	// SSL_CERT_FILE, sends it the BasedOnUbi query, and gets a 503.
	pyxisSeen := &refuser{status: http.StatusServiceUnavailable, message: "Pyxis cannot be reached from this machine"}
	pyxis := httptest.NewTLSServer(pyxisSeen)
	t.Cleanup(pyxis.Close)
	caFile := filepath.Join(dir, "pyxis-ca.pem")
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: pyxis.Certificate().Raw})
	if err := os.WriteFile(caFile, ca, 0o644); err != nil {
		t.Fatal(err)
	}
	// Anything else bound off the machine goes to this proxy, which refuses
	// it. Loopback addresses never go through a proxy.
	offMachine := &refuser{status: http.StatusForbidden, message: "nothing leaves this machine"}
	proxy := httptest.NewServer(offMachine)
	t.Cleanup(proxy.Close)

	work := filepath.Join(dir, "preflight")
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, preflight, "check", "container", ref, "--insecure")
	// preflight reads a config.yaml in its working directory: none there.
	cmd.Dir = work
	cmd.Env = append(os.Environ(),
		"PFLT_ARTIFACTS="+filepath.Join(work, "artifacts"),
		"PFLT_LOGFILE="+filepath.Join(work, "preflight.log"),
		"PFLT_PYXIS_HOST="+strings.TrimPrefix(pyxis.URL, "https://"),
		"SSL_CERT_FILE="+caFile,
		"HTTP_PROXY="+proxy.URL, "HTTPS_PROXY="+proxy.URL, "NO_PROXY=",
		"http_proxy="+proxy.URL, "https_proxy="+proxy.URL, "no_proxy=",
	)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start = time.Now()
	// preflight exits 0 whether or not the checks pass; the results say.
	if err := cmd.Run(); err != nil {
		t.Fatalf("preflight check container: %v\n%s%s", err, stdout.String(), stderr.String())
	}
	t.Logf("preflight ran in %s", time.Since(start).Round(time.Millisecond))
	t.Logf("preflight's results:\n%s", stdout.String())

	var r report
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatalf("preflight's results are not JSON: %v\n%s", err, stdout.String())
	}
	if r.Image != ref {
		t.Errorf("preflight checked %q, not %q", r.Image, ref)
	}
	ran := names(append(append(slices.Clone(r.Results.Passed), r.Results.Failed...), r.Results.Errors...))
	if want := policies[containerPolicy]; !slices.Equal(ran, want) {
		t.Errorf("preflight ran %v, its %s is %v", ran, containerPolicy, want)
	}
	// In the policy's order, which listChecks sorts.
	var wantPassed, wantNotPassed []string
	for _, c := range policies[containerPolicy] {
		if _, ok := cannotPassHere[c]; ok {
			wantNotPassed = append(wantNotPassed, c)
		} else {
			wantPassed = append(wantPassed, c)
		}
	}
	if got := names(r.Results.Passed); !slices.Equal(got, wantPassed) {
		t.Errorf("passed: %v, want %v", got, wantPassed)
	}
	notPassed := names(append(slices.Clone(r.Results.Failed), r.Results.Errors...))
	if !slices.Equal(notPassed, wantNotPassed) {
		t.Errorf("failed or errored: %v, want only %v, which cannot pass here: %v", notPassed, wantNotPassed, cannotPassHere)
	}

	if t.Failed() {
		// Why each check failed is in preflight's log only.
		if l, err := os.ReadFile(filepath.Join(work, "preflight.log")); err == nil {
			t.Logf("preflight.log:\n%s", l)
		}
	}

	// BasedOnUbi's one query reached the loopback Pyxis, and nothing else
	// tried to leave the machine.
	if seen := pyxisSeen.list(); len(seen) != 1 || !strings.HasPrefix(seen[0], "POST ") || !strings.HasSuffix(seen[0], "/graphql/") {
		t.Errorf("Pyxis got %v, want BasedOnUbi's one POST to /graphql/", seen)
	}
	if seen := offMachine.list(); len(seen) != 0 {
		t.Errorf("preflight tried to reach off the machine: %v", seen)
	}
}

// listChecks is the checks of each policy `preflight list-checks` prints,
// sorted, by the policy's name.
func listChecks(t *testing.T, preflight string) map[string][]string {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), preflight, "list-checks")
	cmd.Dir = t.TempDir()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("preflight list-checks: %v", err)
	}
	policies := map[string][]string{}
	var policy string
	for _, line := range strings.Split(string(out), "\n") {
		switch {
		case strings.HasPrefix(line, "["):
			policy, _, _ = strings.Cut(strings.TrimPrefix(line, "["), "]")
		case strings.HasPrefix(line, "- ") && policy != "":
			policies[policy] = append(policies[policy], strings.TrimPrefix(line, "- "))
		}
	}
	for _, p := range []string{containerPolicy, scratchPolicy} {
		if len(policies[p]) == 0 {
			t.Fatalf("preflight list-checks names no %s:\n%s", p, out)
		}
		slices.Sort(policies[p])
	}
	return policies
}

// push copies the image in the docker-archive to ref, a plain-HTTP loopback
// registry.
func push(t *testing.T, archive, ref string) {
	t.Helper()
	img, err := tarball.ImageFromPath(archive, nil)
	if err != nil {
		t.Fatal(err)
	}
	tag, err := name.NewTag(ref, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(tag, img, remote.WithContext(t.Context())); err != nil {
		t.Fatalf("pushing %s: %v", ref, err)
	}
}
