// Package preflight runs openshift-preflight, the tool Red Hat's container
// certification runs, against the operator image, offline.
//
// The image is the one package images builds from this tree and the
// Dockerfile; it is pushed to a registry served in process on loopback
// (go-containerregistry's pkg/registry), and `preflight check container`
// (bin/preflight, `make preflight`) pulls it from there over plain HTTP
// (--insecure). No result is submitted (no --submit, no project or token).
//
// One check of the container policy asks Red Hat: BasedOnUbi sends the
// image's layer digests to Pyxis (catalog.redhat.com) to learn whether one of
// them is a certified UBI layer. The test points Pyxis at a server on
// loopback that records the query and answers 503, and points HTTP(S)_PROXY
// at a loopback server that refuses and records any other request preflight
// would send off the machine; the test fails if it sees one.
//
// Every check of the policy must pass but those listed in
// cannotPassHere, each with the reason. `make test-preflight` runs it.
package preflight
