// Package disconnected proves what the CSV's
// features.operators.openshift.io/disconnected annotation promises of the
// release bundle: every image it makes a cluster pull is named by digest,
// so an ImageDigestMirrorSet (or any mirror configured by digest) serves
// it on a cluster that cannot reach the original registries.
//
// TestReleaseBundleNamesEveryImageByDigest builds the images the committed
// bundle names (package images), pushes them to in-process registries that
// stand in for quay.io, docker.io and example.com (package registrymirror),
// runs `make bundle USE_IMAGE_DIGESTS=true` in a copy of the tree with its
// registry lookups (crane's, see hack/bundle.sh) sent to those registries
// through a loopback HTTPS proxy (package releasebundle), and checks that
// the result names each image by the digest pushed under its tag, and is
// otherwise the committed bundle, with no request leaving the machine.
//
// The committed bundle/ stays by tag: it is the development bundle the
// other suites install with images imported under those tags.
//
// Run it with `make test-disconnected`, which builds controller-gen,
// kustomize and operator-sdk first, and unpacks the memcached release the
// node's image holds (make memcached). Nothing contacts a host off this machine.
package disconnected
