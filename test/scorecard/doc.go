// Package scorecard runs `operator-sdk scorecard` on the bundle, as OLM
// and OperatorHub's checks do, on a local cluster whose pods run on the real
// node.
//
// The configuration is the bundle's own, bundle/tests/scorecard/config.yaml
// (written by `make bundle` from config/scorecard): the basic and olm suites.
// Its test image, operator-sdk's scorecard-test, is built from the
// operator-sdk module that bin/operator-sdk is built from (package images),
// and imported into the real node under the name the configuration gives it,
// so nothing is pulled; the image that unpacks the bundle in each test pod
// (--untar-image) is the node's busybox. The pods run with scorecard's
// restricted security context in a namespace that enforces Pod Security
// restricted, as OpenShift's restricted-v2 would have them.
//
// Every test of the configuration must pass. `make test-scorecard` runs it
// (root: the real node).
package scorecard
