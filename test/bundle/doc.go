// Package bundle holds the tests of the OLM bundle that `make bundle` writes
// into bundle/ and of the file-based catalog made from it.
//
// They read the committed files only: no cluster, no image, no network.
//
//   - operator-framework/api's validators (the default bundle validators,
//     OperatorHub v2, standard capabilities and categories, good practices
//     and removed APIs) pass with no error and no warning.
//   - bundle/metadata/annotations.yaml, the labels of bundle.Dockerfile and
//     bundle/tests/scorecard/config.yaml agree.
//   - bundle/ is what config/ produces now: the CRD equals config/crd/bases, the webhook definitions carry the rules of
//     config/webhook/manifests.yaml, alm-examples are config/samples.
//   - What OLM and OperatorHub read from the CSV is checked: the
//     feature annotations, install modes, related images and a manager
//     Deployment that runs on OLM's webhook certificate alone; the
//     valid-subscription annotation in the form Red Hat's release policy
//     requires, naming only OpenShift's own subscriptions.
//   - The channels are the Makefile's, fast and stable (the default), and
//     the upgrade edges follow VERSION and PREVIOUS_VERSION: olm.skipRange
//     up to the CSV's version, spec.replaces the release before.
//   - The CSV's minKubeVersion is the newest Kubernetes release the bundle
//     needs, derived by compiling every CRD validation rule in the CEL
//     environment each release gives new rules, and from the API fields the
//     operator writes; com.redhat.openshift.versions names the first
//     OpenShift built on that release.
//   - No ServiceMonitor or PodMonitor under config/ or bundle/ (nor a JSON
//     patch that may target one) names a file or skips TLS verification,
//     which OpenShift's user-workload monitoring refuses.
//
// When one fails after a change under config/ or api/, run `make bundle` and
// commit bundle/ and bundle.Dockerfile with the change.
package bundle
