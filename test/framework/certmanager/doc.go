// Package certmanager runs cert-manager's real controllers in the test
// process, against a local cluster: the module proxy serves cert-manager's
// root module (its pkg/controller and pkg/controller/cainjector) but not its
// command modules, so there is no binary to run. Certificates from SelfSigned
// and CA Issuers become Ready, Secrets are written and renewed, and CA bundles
// are injected into webhook configurations, as with cert-manager installed.
//
//	err := certmanager.Start(ctx, cluster.KubeconfigPath(), cluster.RestConfig(), logger)
package certmanager
