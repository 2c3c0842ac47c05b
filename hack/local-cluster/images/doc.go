// Package images builds the container images the local cluster's real node
// runs, without Docker and without a registry: each is written as a
// docker-archive that `ctr images import` loads into containerd (see
// localcluster.Cluster.ImportImages).
//
//   - Pause: the pod sandbox, from ./pause built static, tagged as the
//     sandbox image containerd asks for.
//   - Memcached: memcached from Debian's package (the binary and the
//     libraries it links), running as memcache, UID 11211, as the official
//     image does.
//   - Busybox: Debian's static busybox (sh, nslookup, nc, ...), run as
//     nobody, the client image every real node comes with.
//   - Operator: the manager built static from this tree, with the user,
//     entrypoint, working directory, ports and labels of the Dockerfile's
//     final stage, read from the Dockerfile itself.
//   - TLSReloader: cmd/tls-reloader, the TLS sidecar, as the Dockerfile's
//     tls-reloader stage says.
//   - MemcachedExporter: prometheus/memcached_exporter, the metrics sidecar,
//     built static and unchanged from its Go module at the version
//     hack/tools/memcached-exporter pins, placed and run (as nobody) as its
//     upstream image has it.
//
// Every file in an image is owned by root, and every image is for this
// machine's platform.
package images
