// Package harness is what the ginkgo suites that run a whole local cluster
// (test/e2e, test/devcluster) do the same way: a work directory kept when a
// spec fails, their own logging sent to a file, the cluster started (a
// suite fails when the control plane is not built) or one started apart
// (ExistingCluster), kubectl, make, and whether a pod is Ready.
//
//	var _ = BeforeSuite(func(ctx SpecContext) {
//		dir := harness.WorkDir("e2e")
//		harness.LogTo(dir, "suite.log")
//		cluster = harness.StartCluster(ctx, localcluster.Options{Dir: filepath.Join(dir, "cluster")})
//	})
package harness
