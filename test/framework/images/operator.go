package images

import (
	"context"
	"fmt"
	"path"
	"path/filepath"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/example-inc/memcached-operator/test/framework/repo"
)

// The Dockerfile's base image, gcr.io/distroless/static:nonroot, brings an
// /etc/passwd with the nonroot user and a world-writable /tmp; the manager
// and the TLS reloader need nothing else from it.
const (
	distrolessPasswd = "root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n"
	distrolessGroup  = "root:x:0:\nnobody:x:65534:\nnonroot:x:65532:\n"
)

// Operator writes the operator image to dir, tagged ref and each of
// aliases (the names a CSV gives it, release after release): the manager
// built static from this tree, placed, configured and labelled as the
// Dockerfile's final stage says.
func Operator(ctx context.Context, dir, ref string, aliases ...string) (Image, error) {
	bin := filepath.Join(dir, "manager")
	if err := buildStatic(ctx, bin, "."); err != nil {
		return Image{}, err
	}
	return operatorImage(dir, bin, ref, aliases...)
}

// operatorImage is Operator's image around a built manager binary.
func operatorImage(dir, bin, ref string, aliases ...string) (Image, error) {
	return dockerfileImage("", "manager", bin, filepath.Join(dir, "operator.tar"), ref, aliases...)
}

// dockerfileImage writes to archive the image of the Dockerfile's stage
// called stageName (the final stage when empty), tagged ref and each of
// aliases: bin, as the one file the stage copies, which it must call name,
// on the distroless base, placed, configured and labelled as the stage
// says.
func dockerfileImage(stageName, name, bin, archive, ref string, aliases ...string) (Image, error) {
	stage, err := ParseDockerfileStage(filepath.Join(repo.Root(), "Dockerfile"), stageName)
	if err != nil {
		return Image{}, err
	}
	if len(stage.Copies) != 1 || path.Base(stage.Copies[0][0]) != name {
		return Image{}, fmt.Errorf("the Dockerfile's stage %q copies %v; package images knows how to build only %s there", stageName, stage.Copies, name)
	}
	dst := stage.Copies[0][1]
	if dst == "." || strings.HasSuffix(dst, "/") {
		dst = path.Join(stage.WorkingDir, dst, name)
	}
	e, err := hostExecutable(bin, dst)
	if err != nil {
		return Image{}, err
	}
	ports := map[string]struct{}{}
	for _, p := range stage.ExposedPorts {
		ports[p] = struct{}{}
	}
	return write(archive, []entry{e,
		{path: "/etc/passwd", mode: 0o644, data: []byte(distrolessPasswd)},
		{path: "/etc/group", mode: 0o644, data: []byte(distrolessGroup)},
		{path: "/tmp", mode: 0o1777, dir: true},
	}, v1.Config{
		User:         stage.User,
		Entrypoint:   stage.Entrypoint,
		WorkingDir:   stage.WorkingDir,
		Labels:       stage.Labels,
		ExposedPorts: ports,
		Env:          []string{defaultPath},
	}, ref, aliases...)
}
