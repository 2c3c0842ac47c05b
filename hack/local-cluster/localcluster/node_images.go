package localcluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
)

// SandboxImage is the pod sandbox image containerd runs for every pod,
// containerd's own default; the launcher builds and imports it (package
// images), as nothing may be pulled.
const SandboxImage = "registry.k8s.io/pause:3.10.1"

// ImportImages loads docker-archives (package images writes them) into the
// real node's containerd, where pods find them by name.
func (c *Cluster) ImportImages(ctx context.Context, archives ...string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.opts.RealNode {
		return errors.New("localcluster: ImportImages needs Options.RealNode")
	}
	return c.importImages(ctx, archives...)
}

func (c *Cluster) importImages(ctx context.Context, archives ...string) error {
	for _, a := range archives {
		cmd := exec.CommandContext(ctx, filepath.Join(c.opts.BinDir, "ctr"),
			"--address", c.layout.containerdSocket(), "--namespace", "k8s.io", "images", "import", a)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("ctr images import %s: %w: %s", a, err, bytes.TrimSpace(out))
		}
	}
	return nil
}
