package releasebundle

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/example-inc/memcached-operator/hack/repo"
)

// CSVFile is the CSV's file in a bundle directory, as operator-sdk names it.
const CSVFile = "manifests/memcached-operator.clusterserviceversion.yaml"

// Make copies the working tree (tracked files and untracked ones git does
// not ignore, so an uncommitted change is part of it) to dir/tree and runs
// `make bundle USE_IMAGE_DIGESTS=true` there with the repository's tools
// (bin/) and env appended to this process's environment. It returns the
// bundle directory it wrote.
//
// The Go module proxy is off for the run: the build needs nothing the
// module cache lacks, and nothing may be fetched while the registry lookups
// are pointed at a mirror. DOCKER_CONFIG is an empty directory, so no
// credential of this machine is offered to anyone.
func Make(ctx context.Context, dir string, env []string) (string, error) {
	tree := filepath.Join(dir, "tree")
	if err := copyWorkingTree(ctx, tree); err != nil {
		return "", err
	}
	dockerConfig := filepath.Join(dir, "docker-config")
	if err := os.MkdirAll(dockerConfig, 0o700); err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, "make", "--no-print-directory", "-C", tree, "bundle",
		"USE_IMAGE_DIGESTS=true", "LOCALBIN="+repo.BinDir())
	cmd.Env = append(os.Environ(), "GOPROXY=off", "DOCKER_CONFIG="+dockerConfig)
	cmd.Env = append(cmd.Env, env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("make bundle USE_IMAGE_DIGESTS=true: %w\n%s", err, out)
	}
	return filepath.Join(tree, "bundle"), nil
}

// copyWorkingTree copies what git lists of the working tree into dst,
// symlinks as symlinks, leaving out bin/ (the tools, passed as LOCALBIN).
func copyWorkingTree(ctx context.Context, dst string) error {
	root := repo.Root()
	cmd := exec.CommandContext(ctx, "git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("git ls-files: %w", err)
	}
	for _, f := range bytes.Split(bytes.TrimSuffix(out, []byte{0}), []byte{0}) {
		rel := string(f)
		if rel == "bin" || rel == "" {
			continue
		}
		if err := copyEntry(filepath.Join(root, rel), filepath.Join(dst, rel)); err != nil {
			return err
		}
	}
	return nil
}

// copyEntry copies one file or symlink; a file git lists that is gone from
// the working tree (deleted, not yet committed) is left out, as it is from
// the tree.
func copyEntry(src, dst string) error {
	fi, err := os.Lstat(src)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		target, err := os.Readlink(src)
		if err != nil {
			return err
		}
		return os.Symlink(target, dst)
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer func() { _ = in.Close() }()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, fi.Mode().Perm())
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		_ = out.Close()
		return err
	}
	return out.Close()
}
