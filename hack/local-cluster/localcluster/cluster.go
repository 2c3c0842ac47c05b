package localcluster

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/example-inc/memcached-operator/certs/certstest"
	"github.com/example-inc/memcached-operator/hack/local-cluster/process"
)

// Cluster is a local control plane. Create it with New, then Start it; Stop
// it when done. A Cluster is safe for concurrent use, and it cannot be
// started again once stopped.
type Cluster struct {
	opts Options

	mu sync.Mutex
	// ownsDir is true when Dir is a temporary directory made by Start, which
	// Stop removes.
	ownsDir bool
	layout  layout
	ports   ports
	pki     *pki
	specs   map[Component]process.Spec
	procs   map[Component]*process.Process
	// nodePorts and node are the real node's, if any; node holds the
	// machine's node lock while the cluster runs.
	nodePorts nodePorts
	node      *node
	// relay is the API server's port on 127.0.0.1 when, with a real node,
	// it listens on the bridge address.
	relay *apiServerRelay
	// nodeImages are the archives of the images every real node has: the
	// pause image and the client image (images.BusyboxTag).
	nodeImages []string
	cs         kubernetes.Interface
	// health is an HTTPS client trusting the cluster CA and presenting the
	// admin certificate, for the readiness endpoints.
	health  *http.Client
	started bool
	stopped bool
}

// New validates and defaults opts. It starts nothing.
func New(opts Options) (*Cluster, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	if err := opts.validate(); err != nil {
		return nil, err
	}
	return &Cluster{opts: opts}, nil
}

// Start brings the cluster up and returns once it can run workloads: the API
// server is ready, the controller manager has created the default
// ServiceAccount, the scheduler is healthy and every fake node is Ready.
// Then, and only then, it writes the admin kubeconfig.
//
// ctx bounds only the start-up (as does Options.StartTimeout); the processes
// run until Stop whatever happens to ctx. If Start fails it stops what it
// started, and the error carries the end of the failing component's log;
// the logs stay in Dir.
func (c *Cluster) Start(ctx context.Context) (err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.started {
		return errors.New("localcluster: a Cluster can be started only once")
	}
	c.started = true

	ctx, cancel := context.WithTimeout(ctx, c.opts.StartTimeout)
	defer cancel()

	if err := c.prepare(ctx); err != nil {
		// A failed prepare may hold the node lock and the network.
		return errors.Join(fmt.Errorf("localcluster: preparing %s: %w", c.opts.Dir, err), c.stopAll())
	}
	defer func() {
		if err != nil {
			// Keep the directory, owned or not: the logs explain the failure.
			c.ownsDir = false
			err = fmt.Errorf("localcluster: start failed (state and logs in %s): %w", c.layout.dir, err)
			if stopErr := c.stopAll(); stopErr != nil {
				err = errors.Join(err, stopErr)
			}
		}
	}()
	for _, comp := range c.opts.components() {
		if err := c.startLocked(ctx, comp); err != nil {
			return err
		}
		if comp == APIServer {
			// Before any other writer exists; see createNodes. With a real
			// node, the fake ones are tainted so that pods run for real
			// unless they tolerate kwok, and those a kept state holds
			// beyond Options.Nodes are removed.
			if err := createNodes(ctx, c.cs, c.opts.Nodes, c.opts.NodeCapacity, c.opts.RealNode); err != nil {
				return err
			}
		}
	}
	// Last, so that scripts can take the file's existence to mean the
	// cluster is ready.
	server := c.serverURL()
	return writeKubeconfig(c.layout.kubeconfig(), server, c.pki.ca.CertPEM, certificateUser(c.pki.clients["admin"]))
}

// prepare creates the directory layout, credentials, kubeconfigs and
// process definitions, and with a real node takes the machine's node lock,
// sets the pod network up and builds the sandbox image. Entries left by an
// earlier cluster in the same Dir are replaced, etcd's data too unless
// Options.KeepState says to keep it.
func (c *Cluster) prepare(ctx context.Context) error {
	dir := c.opts.Dir
	if dir == "" {
		d, err := os.MkdirTemp("", "localcluster-")
		if err != nil {
			return err
		}
		dir, c.ownsDir = d, true
	}
	c.layout = layout{dir: dir}
	l := c.layout
	if c.opts.RealNode {
		var err error
		if c.node, err = acquireNode(l, c.binary(KubeProxy)); err != nil {
			return err
		}
		// Whatever an earlier node left mounted here must go before the
		// directory is removed: RemoveAll would descend into the mounts.
		if err := removeLeftovers(l, c.binary(KubeProxy)); err != nil {
			return err
		}
		if err := networkUp(); err != nil {
			return err
		}
	}
	stale := []string{l.kubeconfig(), l.logs(), l.pki(), l.config(), l.node()}
	if !c.opts.KeepState {
		stale = append(stale, l.etcdData())
	}
	for _, p := range stale {
		if err := os.RemoveAll(p); err != nil {
			return err
		}
	}
	for _, p := range []string{l.logs(), l.config()} {
		if err := os.MkdirAll(p, 0o755); err != nil {
			return err
		}
	}

	ps, err := certstest.FreePorts(10)
	if err != nil {
		return fmt.Errorf("picking ports: %w", err)
	}
	c.ports = ports{etcdClient: ps[0], etcdPeer: ps[1], apiServer: ps[2], controllerManager: ps[3], scheduler: ps[4]}
	c.nodePorts = nodePorts{kubelet: ps[5], kubeletHealthz: ps[6], kubeProxyHealthz: ps[7], kubeProxyMetrics: ps[8], coreDNSReady: ps[9]}

	if c.pki, err = newPKI(l.pki()); err != nil {
		return err
	}
	for _, comp := range []Component{APIServer, ControllerManager, Scheduler} {
		if err := os.MkdirAll(l.scratch(comp), 0o700); err != nil {
			return err
		}
	}
	if c.opts.RealNode {
		if c.relay, err = relayAPIServer(c.apiServerAddress()); err != nil {
			return fmt.Errorf("relaying the API server to loopback: %w", err)
		}
	}
	server := c.componentServer()
	for _, comp := range []Component{ControllerManager, Scheduler, Kwok, CoreDNS, Kubelet, KubeProxy} {
		if err := writeKubeconfig(l.componentKubeconfig(comp), server, c.pki.ca.CertPEM, certificateUser(c.pki.clients[string(comp)])); err != nil {
			return err
		}
	}
	if err := os.WriteFile(schedulerConfigPath(l), []byte(schedulerConfig(l)), 0o644); err != nil {
		return err
	}

	if c.cs, err = kubernetes.NewForConfig(c.restConfig()); err != nil {
		return err
	}
	c.health, err = c.healthClient()
	if err != nil {
		return err
	}

	args := map[Component][]string{
		Etcd:              etcdArgs(l, c.ports),
		APIServer:         apiServerArgs(l, c.ports, c.pki, c.opts.RealNode),
		ControllerManager: controllerManagerArgs(l, c.ports, c.pki),
		Scheduler:         schedulerArgs(l, c.ports, c.pki),
		Kwok:              kwokArgs(l, c.opts.StagesFile),
		CoreDNS:           coreDNSArgs(l),
		Containerd:        containerdArgs(l),
		Kubelet:           kubeletArgs(l),
		KubeProxy:         kubeProxyArgs(l),
	}
	c.specs = map[Component]process.Spec{}
	c.procs = map[Component]*process.Process{}
	for _, comp := range c.opts.components() {
		c.specs[comp] = process.Spec{
			Path:    c.binary(comp),
			Args:    append(args[comp], c.opts.ExtraArgs[comp]...),
			Env:     componentEnv(),
			Dir:     dir,
			LogPath: l.log(comp),
		}
	}
	if c.opts.RealNode {
		return c.prepareNode(ctx)
	}
	return nil
}

func (c *Cluster) binary(comp Component) string {
	return filepath.Join(c.opts.BinDir, string(comp))
}

func (c *Cluster) healthClient() (*http.Client, error) {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(c.pki.ca.CertPEM) {
		return nil, errors.New("cannot parse the cluster CA")
	}
	admin := c.pki.clients["admin"]
	cert, err := tls.X509KeyPair(admin.CertPEM, admin.KeyPEM)
	if err != nil {
		return nil, err
	}
	return &http.Client{Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12},
		// Never reuse a connection across a restart of the server. (A bare
		// Transport also ignores HTTP_PROXY, unlike http.DefaultTransport.)
		DisableKeepAlives: true,
	}}, nil
}

// startLocked starts one component and waits until it is ready.
func (c *Cluster) startLocked(ctx context.Context, comp Component) error {
	if p := c.procs[comp]; p != nil && p.Running() {
		return fmt.Errorf("localcluster: %s is already running", comp)
	}
	p, err := process.Start(c.specs[comp])
	if err != nil {
		return err
	}
	c.procs[comp] = p
	switch comp {
	case Etcd:
		return p.WaitFor(ctx, "health", c.httpOK(loopbackURL("http", c.ports.etcdClient)+"/health"))
	case APIServer:
		return p.WaitFor(ctx, "readiness", c.httpOK(c.serverURL()+"/readyz"))
	case ControllerManager:
		if err := p.WaitFor(ctx, "health", c.httpOK(loopbackURL("https", c.ports.controllerManager)+"/healthz")); err != nil {
			return err
		}
		return p.WaitFor(ctx, "the default ServiceAccount", func(ctx context.Context) error {
			return defaultServiceAccount(ctx, c.cs)
		})
	case Scheduler:
		return p.WaitFor(ctx, "readiness", c.httpOK(loopbackURL("https", c.ports.scheduler)+"/readyz"))
	case Kwok:
		return p.WaitFor(ctx, "ready nodes", func(ctx context.Context) error {
			return nodesReady(ctx, c.cs, c.opts.Nodes)
		})
	case CoreDNS:
		return p.WaitFor(ctx, "readiness (synced with the API server)", c.httpOK(loopbackURL("http", c.nodePorts.coreDNSReady)+"/ready"))
	case Containerd:
		if err := p.WaitFor(ctx, "its CRI service", c.criReady); err != nil {
			return err
		}
		return c.importImages(ctx, c.nodeImages...)
	case Kubelet:
		return p.WaitFor(ctx, "node "+RealNodeName+" Ready", func(ctx context.Context) error {
			return realNodeReady(ctx, c.cs)
		})
	case KubeProxy:
		return p.WaitFor(ctx, "health (rules synced)", c.httpOK(loopbackURL("http", c.nodePorts.kubeProxyHealthz)+"/healthz"))
	}
	return fmt.Errorf("unknown component %q", comp)
}

// httpOK returns a check that succeeds on an HTTP 200 from url.
func (c *Cluster) httpOK(url string) func(context.Context) error {
	client := c.health
	if strings.HasPrefix(url, "http:") {
		client = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	}
	return func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		defer func() { _ = resp.Body.Close() }()
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("GET %s: %s: %s", url, resp.Status, strings.TrimSpace(string(body)))
		}
		return nil
	}
}

// Stop shuts every component down in reverse start order, waiting for each
// to exit (SIGTERM, then SIGKILL after Options.StopTimeout). When it returns,
// no process of the cluster is left. It removes Dir if Start created it.
// Stop is idempotent, and safe to call after a failed or without a Start.
func (c *Cluster) Stop() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		return nil
	}
	c.stopped = true
	c.started = true // a stopped cluster cannot be started
	err := c.stopAll()
	if err == nil && c.ownsDir {
		err = os.RemoveAll(c.layout.dir)
	}
	if err != nil {
		return fmt.Errorf("localcluster: stop: %w", err)
	}
	return nil
}

func (c *Cluster) stopAll() error {
	var errs []error
	// Reverse order: clients before servers, so that no component spends
	// its shutdown retrying against one that is already gone.
	for _, comp := range slices.Backward(c.opts.components()) {
		if comp == Containerd && c.procs[comp] != nil && c.procs[comp].Running() {
			// kubelet is gone; remove the pods as it would have, while
			// containerd can still run their CNI teardown.
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			errs = append(errs, c.removePods(ctx))
			cancel()
		}
		errs = append(errs, c.procs[comp].Stop(c.opts.StopTimeout))
	}
	if c.node != nil {
		errs = append(errs, removeLeftovers(c.layout, c.binary(KubeProxy)), c.node.release())
		c.node = nil
	}
	if c.relay != nil {
		errs = append(errs, c.relay.close())
		c.relay = nil
	}
	return errors.Join(errs...)
}

// StopComponent stops one component (SIGTERM, then SIGKILL after
// Options.StopTimeout) and waits for it to exit. The rest of the cluster
// keeps running; clients of a stopped API server get connection errors,
// and an API server without etcd answers with errors until etcd is back
// (etcd first gives open watch streams its request timeout to end).
func (c *Cluster) StopComponent(comp Component) error {
	return c.withProc(comp, func(p *process.Process) error { return p.Stop(c.opts.StopTimeout) })
}

// KillComponent kills one component with SIGKILL, as a crash or an OOM kill
// would, and waits until it is gone. Restart it with StartComponent.
func (c *Cluster) KillComponent(comp Component) error {
	return c.withProc(comp, (*process.Process).Kill)
}

// withProc runs f on a component's process, under the lock.
func (c *Cluster) withProc(comp Component, f func(*process.Process) error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	p, err := c.procLocked(comp)
	if err != nil {
		return err
	}
	return f(p)
}

// StartComponent starts a component stopped by StopComponent or
// KillComponent again, on the same port with the same flags and data, and waits until it is ready as
// Start does. Bounded by ctx and Options.StartTimeout.
func (c *Cluster) StartComponent(ctx context.Context, comp Component) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, err := c.procLocked(comp); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, c.opts.StartTimeout)
	defer cancel()
	if err := c.startLocked(ctx, comp); err != nil {
		// Leave nothing half-started behind; the caller may retry.
		return errors.Join(err, c.procs[comp].Kill())
	}
	return nil
}

func (c *Cluster) procLocked(comp Component) (*process.Process, error) {
	if c.stopped {
		return nil, errors.New("localcluster: cluster is stopped")
	}
	p := c.procs[comp]
	if p == nil {
		return nil, fmt.Errorf("localcluster: unknown component %q or cluster not started", comp)
	}
	return p, nil
}

// RestConfig returns a new admin (system:masters) rest.Config for the API
// server, with client-go's default rate limits; raise QPS and Burst on the
// copy for load tests.
func (c *Cluster) RestConfig() *rest.Config {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.restConfig()
}

// serverURL is the API server's URL for clients on this machine: always on
// loopback, which no proxy variable can divert.
func (c *Cluster) serverURL() string {
	if c.relay != nil {
		return loopbackURL("https", c.relay.port())
	}
	return loopbackURL("https", c.ports.apiServer)
}

// componentServer is the API server's URL for the cluster's own processes.
func (c *Cluster) componentServer() string { return "https://" + c.apiServerAddress() }

// apiServerAddress is where the API server listens: the bridge address with
// a real node, else loopback.
func (c *Cluster) apiServerAddress() string {
	host := "127.0.0.1"
	if c.opts.RealNode {
		host = bridgeIP
	}
	return net.JoinHostPort(host, strconv.Itoa(c.ports.apiServer))
}

func (c *Cluster) restConfig() *rest.Config {
	if c.pki == nil {
		return nil
	}
	return restConfig(c.serverURL(), c.pki.ca.CertPEM, c.pki.clients["admin"])
}

// KubeconfigPath returns the path of the admin kubeconfig, <Dir>/kubeconfig.
// Start writes it, atomically, once the cluster is ready. The credentials
// are embedded, so the file can be copied anywhere.
func (c *Cluster) KubeconfigPath() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.layout.kubeconfig()
}

// Options are the cluster's options, defaults filled in.
func (c *Cluster) Options() Options { return c.opts }

// Dir returns the directory holding the cluster's state and logs; it is
// known once Start has been called.
func (c *Cluster) Dir() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.layout.dir
}

// LogPath returns the log file of a component, <Dir>/logs/<component>.log.
// It holds the output of every run of the component, restarts included.
func (c *Cluster) LogPath(comp Component) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.layout.log(comp)
}

// PIDs returns the process id of every running component. Each is also the
// id of the component's process group.
func (c *Cluster) PIDs() map[Component]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	pids := map[Component]int{}
	for comp, p := range c.procs {
		if p.Running() {
			pids[comp] = p.PID()
		}
	}
	return pids
}
