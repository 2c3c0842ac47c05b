// Package operatorproc builds the operator from this tree and runs it as a
// host process, the way the end-to-end, fault, OLM and benchmark suites need
// it: its own process group, its output in a log file, an environment that
// holds only what the caller gives it of the variables the operator reads,
// and stop (SIGTERM, as kubelet sends) or kill -9 on demand.
//
//	bin := filepath.Join(dir, "manager")
//	err := operatorproc.Build(ctx, bin)
//	p, err := operatorproc.Start(operatorproc.Options{
//		Binary: bin, Kubeconfig: kubeconfig, LogPath: logPath,
//		Args: []string{"--leader-elect=false"},
//	})
//	defer p.Stop(30 * time.Second)
package operatorproc
