package repo

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
)

// modulePath is the operator's module: its go.mod marks the repository's top.
const modulePath = "github.com/example-inc/memcached-operator"

// Root is the repository's top folder: the nearest folder, from the working
// directory up, whose go.mod is the operator's. Tests run in their package's
// folder and the commands from the repository; nothing is read from the
// binary's own paths, which -trimpath (every build make runs) leaves out.
func Root() string {
	dir, err := root()
	if err != nil {
		panic("repo: " + err.Error())
	}
	return dir
}

var root = sync.OnceValues(func() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if f, err := readGoMod(filepath.Join(dir, "go.mod")); err == nil && f.Module.Path == modulePath {
			return dir, nil
		}
		if filepath.Dir(dir) == dir {
			return "", fmt.Errorf("no go.mod of %s in %s or above it", modulePath, wd)
		}
	}
})

// CRDDir holds the CRDs that controller-gen writes.
func CRDDir() string { return filepath.Join(Root(), "config", "crd", "bases") }

// WebhookDir holds the webhook configurations that controller-gen writes.
func WebhookDir() string { return filepath.Join(Root(), "config", "webhook") }

// ModuleDir is where the module path, as this module requires it, lies in
// the module cache: for the manifests a dependency ships (CRDs).
func ModuleDir(path string) (string, error) {
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", path)
	cmd.Dir = Root()
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go list -m %s: %w", path, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// OpenShiftAPIServerCRD is the CRD of OpenShift's APIServer API
// (config.openshift.io/v1), as a cluster of the Default feature set serves
// it, from the github.com/openshift/api this module requires.
func OpenShiftAPIServerCRD() (string, error) {
	dir, err := ModuleDir("github.com/openshift/api")
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "config", "v1", "zz_generated.crd-manifests", "0000_10_config-operator_01_apiservers-Default.crd.yaml"), nil
}

// BinDir is where the Makefile puts the tools it builds.
func BinDir() string { return filepath.Join(Root(), "bin") }

// Tool is the path of a tool the Makefile builds: $NAME (upper case) when
// set, as `make` passes them, or bin/name.
func Tool(name string) string {
	if p := os.Getenv(strings.ToUpper(name)); p != "" {
		return p
	}
	return filepath.Join(BinDir(), name)
}

// kubernetesModuleFile is the wrapper module that builds the control plane.
// Its requirement of k8s.io/kubernetes is the project's one statement of the
// Kubernetes version: hack/tools.mk reads it too.
const kubernetesModuleFile = "hack/tools/kubernetes/go.mod"

var kubernetesVersion = sync.OnceValues(func() (string, error) {
	v, err := requiredVersion(kubernetesModuleFile, "k8s.io/kubernetes")
	return strings.TrimPrefix(v, "v"), err
})

// requiredVersion is the version of module that the go.mod at file (relative
// to the root) requires.
func requiredVersion(file, module string) (string, error) {
	path := filepath.Join(Root(), file)
	f, err := readGoMod(path)
	if err != nil {
		return "", err
	}
	for _, r := range f.Require {
		if r.Path == module {
			return r.Version, nil
		}
	}
	return "", fmt.Errorf("%s does not require %s", path, module)
}

// goMod is what `go mod edit -json` prints of a go.mod that the callers
// read.
type goMod struct {
	Module  struct{ Path string }
	Require []struct{ Path, Version string }
}

// readGoMod reads the go.mod at path as the go command parses it.
func readGoMod(path string) (goMod, error) {
	var f goMod
	if _, err := os.Stat(path); err != nil {
		return f, err
	}
	out, err := exec.Command("go", "mod", "edit", "-json", path).Output()
	if err != nil {
		return f, fmt.Errorf("go mod edit -json %s: %w", path, err)
	}
	return f, json.Unmarshal(out, &f)
}

// KubernetesVersion is the version of the control plane the project builds
// and tests against, without the leading v (1.37.2).
func KubernetesVersion() string {
	v, err := kubernetesVersion()
	if err != nil {
		panic("repo: " + err.Error())
	}
	return v
}

// ControlPlaneDir is where `make control-plane` puts kube-apiserver, etcd,
// kube-controller-manager, kube-scheduler, kubectl and kwok (and `make node`
// kubelet, kube-proxy and containerd): the value of KUBEBUILDER_ASSETS when
// set (make sets it), else bin/k8s/<KubernetesVersion>.
func ControlPlaneDir() string {
	if dir := os.Getenv("KUBEBUILDER_ASSETS"); dir != "" {
		return dir
	}
	return filepath.Join(BinDir(), "k8s", KubernetesVersion())
}

// CertManagerCRDDir is deploy/crds of the cert-manager module go.mod
// requires, found in the module cache.
func CertManagerCRDDir() (string, error) {
	dir, err := ModuleDir("github.com/cert-manager/cert-manager")
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "deploy", "crds"), nil
}

// prometheusOperatorAPI is the module of the Prometheus Operator's API types;
// the version go.mod requires is the version of the CRDs tests install.
const prometheusOperatorAPI = "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring"

var prometheusOperatorVersion = sync.OnceValues(func() (string, error) {
	return requiredVersion("go.mod", prometheusOperatorAPI)
})

// PrometheusOperatorCRDDir is where `make prometheus-operator-crds` puts the
// Prometheus Operator's CRDs (monitoring.coreos.com/v1): the value of
// PROMETHEUS_OPERATOR_CRDS when set (make sets it), else
// bin/crds/prometheus-operator-<version go.mod requires>.
func PrometheusOperatorCRDDir() string {
	if dir := os.Getenv("PROMETHEUS_OPERATOR_CRDS"); dir != "" {
		return dir
	}
	v, err := prometheusOperatorVersion()
	if err != nil {
		panic("repo: " + err.Error())
	}
	return filepath.Join(BinDir(), "crds", "prometheus-operator-"+v)
}

// memcachedDebianLine is hack/tools.mk's statement of the memcached release
// the operator ships, as Debian trixie packages it.
var memcachedDebianLine = regexp.MustCompile(`(?m)^MEMCACHED_DEBIAN_VERSION \?= (\S+)$`)

var memcachedDebianVersion = sync.OnceValues(func() (string, error) {
	return makeDefault(filepath.Join("hack", "tools.mk"), memcachedDebianLine)
})

// MemcachedRoot is where `make memcached` unpacks the memcached release the
// operator ships: the value of MEMCACHED_ROOT when set (make sets it), else
// bin/memcached-<MEMCACHED_DEBIAN_VERSION of hack/tools.mk>.
func MemcachedRoot() string {
	if dir := os.Getenv("MEMCACHED_ROOT"); dir != "" {
		return dir
	}
	v, err := memcachedDebianVersion()
	if err != nil {
		panic("repo: " + err.Error())
	}
	return filepath.Join(BinDir(), "memcached-"+v)
}

// goFIPS140Line is the Makefile's statement of the Go Cryptographic Module
// the product's binaries are built with; the Dockerfile repeats it.
var goFIPS140Line = regexp.MustCompile(`(?m)^GOFIPS140 \?= (\S+)$`)

var goFIPS140 = sync.OnceValues(func() (string, error) {
	return makeDefault("Makefile", goFIPS140Line)
})

// makeDefault is the value that line, a make variable's default with the
// value as its one group, gives in the file at path in the repository.
func makeDefault(path string, line *regexp.Regexp) (string, error) {
	data, err := os.ReadFile(filepath.Join(Root(), path))
	if err != nil {
		return "", err
	}
	m := line.FindSubmatch(data)
	if m == nil {
		return "", fmt.Errorf("%s has no line %q", path, line)
	}
	return string(m[1]), nil
}

// GoFIPS140 is the value of GOFIPS140 that make build, make run and the
// Dockerfile build the manager and the TLS reloader with (v1.0.0), so that
// the tests run what they ship.
func GoFIPS140() string {
	v, err := goFIPS140()
	if err != nil {
		panic("repo: " + err.Error())
	}
	return v
}
