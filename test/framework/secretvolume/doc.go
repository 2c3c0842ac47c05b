// Package secretvolume writes files the way kubelet writes a Secret volume,
// so that tests can mount a Secret on the host and rotate it as a cluster
// would, for a process that runs outside any pod.
//
// Kubelet never rewrites a projected file in place. It writes every key into
// a new hidden directory, points the ..data symlink at it with one atomic
// rename, and leaves each key as a symlink through ..data, then removes the
// old directory:
//
//	dir/..2026_05_01_10_00_00.123456789/tls.crt
//	dir/..data -> ..2026_05_01_10_00_00.123456789
//	dir/tls.crt -> ..data/tls.crt
//
// A reader therefore sees either the old set of files or the new one, never a
// new certificate with an old key, and file watchers see the old files
// removed rather than written. [Write] reproduces that layout:
//
//	err := secretvolume.Write(dir, secret.Data)
package secretvolume
