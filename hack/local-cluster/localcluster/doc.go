/*
Package localcluster runs a small but real Kubernetes control plane on the
loopback interface, for end-to-end tests, benchmarks, fault tests and
`make run`.

A cluster is five processes built from the Kubernetes sources:

  - etcd, holding the cluster state in <Dir>/etcd;
  - kube-apiserver, serving HTTPS with client-certificate authentication and
    RBAC, with the PodSecurity admission plugin on (the default) and the
    ServiceAccount admission plugin off, so that pods need no token;
  - kube-controller-manager, running all default controllers (deployments,
    replica sets, garbage collector, namespaces, endpoint slices, disruption
    budgets, ...);
  - kube-scheduler, which binds pods to nodes exactly as in a real cluster;
  - kwok, which plays the kubelet for Options.Nodes fake nodes, so scheduled
    pods become Running and Ready without containers.

Every process listens on 127.0.0.1 only, on ports picked at start, and logs to
<Dir>/logs/<component>.log. An admin kubeconfig is written to
<Dir>/kubeconfig.

With Options.RealNode the cluster also has a node that runs pods for real:
containerd with runc and the CNI bridge plugin, kubelet and kube-proxy, on
a bridge the launcher creates (localcluster0, 10.88.0.1/16), and CoreDNS
serving cluster.local on the bridge address, kubelet's clusterDNS.
The API server then listens on the bridge address, so that pods reach it
through the kubernetes Service, and clients on this machine reach it through
a relay on 127.0.0.1, which no HTTP_PROXY or HTTPS_PROXY diverts (the
cluster's own processes run without the proxy variables); the fake nodes get
a taint, so that pods run for real unless they tolerate kwok. Nothing is pulled: containerd's
registries are a push-only loopback host; the node imports the sandbox image
and a busybox client image (images.BusyboxTag) itself, and ImportImages
loads others built by package images. Stop removes the pods and everything the node put
on the machine; NodeLeftovers lists what a node left, and
RemoveNodeLeftovers cleans up after a launcher that was killed.

Processes run in their own process groups and are not bound to any context:
they live until Stop, which shuts them down in reverse order and waits for
them, so nothing is left behind. Each process is also killed by the kernel if
the launching program dies without calling Stop.

Typical use in a ginkgo suite:

	var cluster *localcluster.Cluster

	var _ = BeforeSuite(func(ctx SpecContext) {
		var err error
		cluster, err = localcluster.New(localcluster.Options{BinDir: os.Getenv("KUBEBUILDER_ASSETS")})
		Expect(err).NotTo(HaveOccurred())
		Expect(cluster.Start(ctx)).To(Succeed())
		DeferCleanup(cluster.Stop)
		k8sClient, err = client.New(cluster.RestConfig(), client.Options{})
		Expect(err).NotTo(HaveOccurred())
	})

Fault tests can stop, kill and start any component (StopComponent,
KillComponent, StartComponent); a restarted process keeps its port, flags
and data, so clients built from RestConfig work again once it is back.

The command hack/local-cluster wraps this package for interactive use and for
the Makefile.
*/
package localcluster
