// Package process runs the host processes of the test framework: the local
// cluster's components, the operator, OLM's operators, opm. Every process
// gets its own process group (a terminal's Ctrl-C or a signal to it cannot
// reach the test, and stopping it stops what it spawned), is killed by the
// kernel if the test binary dies first, and appends its output to a log file
// that restarts share. It also reads what the kernel knows of any process,
// its own or a container's seen from the host (ReadUsage, ReadEnviron).
//
//	p, err := process.Start(process.Spec{Path: bin, Args: args, LogPath: log})
//	...
//	err = p.WaitFor(ctx, "readiness", func(ctx context.Context) error { ... })
//	defer p.Stop(20 * time.Second)
package process
