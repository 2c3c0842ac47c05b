// Package operatorproc is the one way the suites run the operator as a host
// process: built from this tree, started with typed Options (webhooks off,
// local or mounted; plain or secure metrics; leader election; its
// environment), on ports it picks itself, and ready when Start returns.
//
//	bin, err := operatorproc.Build(ctx, filepath.Join(dir, "manager"))
//	op, err := operatorproc.Start(ctx, operatorproc.Options{
//		Binary: bin, Kubeconfig: kubeconfig, LogPath: logPath,
//		Webhooks: operatorproc.WebhooksLocal, WebhookCertDir: certDir,
//		WatchNamespace: ns,
//	})
//	defer op.Stop(30 * time.Second)
//
// The operator's environment holds only what Options give it of the
// variables it reads, never the test's own (a developer's proxy or
// WATCH_NAMESPACE must not leak into a test).
package operatorproc
