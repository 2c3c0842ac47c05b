// Package registrymirror serves, on loopback and in process, registries that
// stand in for real ones (quay.io, docker.io, example.com, ...), so that a
// test can resolve and pull images by their published names while no
// connection leaves the machine.
//
// Each mirrored host gets its own registry (go-containerregistry's
// pkg/registry, in memory), reachable two ways:
//
//   - Endpoint(host): a plain-HTTP loopback address, as a registry mirror
//     is configured (containerd's hosts.toml), and where Push writes.
//   - ProxyURL: an HTTPS proxy (CONNECT) that answers for the mirrored
//     hosts itself, presenting a certificate for them signed by the
//     mirror's own CA (CAFile). A program run with ProxyEnv, such as
//     operator-sdk resolving tags to digests with go-containerregistry,
//     then talks to "quay.io" and reaches the mirror. A CONNECT to any
//     other host, and any plain-HTTP proxy request, is refused and
//     recorded (Refused): the proxy never dials out.
//
// Every request a registry answers is recorded (Requests), by host, so a
// test can show which manifests were served and that nothing else was
// asked for.
//
//	m, err := registrymirror.Start(dir, "quay.io", "index.docker.io")
//	defer m.Close()
//	digest, err := m.Push(ctx, "quay.io/prometheus/memcached-exporter:v0.16.0", img)
//	cmd.Env = append(os.Environ(), m.ProxyEnv()...)
package registrymirror
