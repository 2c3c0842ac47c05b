package main

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// The files of a cluster's directory that the commands share. The launcher
// writes the pid file once the cluster is ready and removes it when it has
// stopped; up writes the node's kind before it starts the launcher.
func pidPath(dir string) string        { return filepath.Join(dir, "pid") }
func nodeKindPath(dir string) string   { return filepath.Join(dir, "node-kind") }
func kubeconfigPath(dir string) string { return filepath.Join(dir, "kubeconfig") }
func launcherLog(dir string) string    { return filepath.Join(dir, "local-cluster.log") }

// running reports the pid of the launcher of the cluster in dir, if it is
// alive. A pid file left by a killed launcher is ignored.
func running(dir string) (int, bool) {
	data, err := os.ReadFile(pidPath(dir))
	if err != nil {
		return 0, false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || pid <= 0 || pid == os.Getpid() {
		return 0, false
	}
	// Signal 0 checks existence; EPERM means it exists but is not ours.
	err = syscall.Kill(pid, 0)
	return pid, err == nil || errors.Is(err, syscall.EPERM)
}

// removeIfOurs deletes the pid file unless another launcher has replaced it.
func removeIfOurs(dir string) error {
	data, err := os.ReadFile(pidPath(dir))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if strings.TrimSpace(string(data)) != strconv.Itoa(os.Getpid()) {
		return nil
	}
	return os.Remove(pidPath(dir))
}
