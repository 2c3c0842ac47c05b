package images

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/example-inc/memcached-operator/hack/local-cluster/gobuild"
	"github.com/example-inc/memcached-operator/hack/repo"
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
// built static from this tree and the license, placed, configured and
// labelled as the Dockerfile's final stage says for VERSION.
func Operator(ctx context.Context, dir, ref string, aliases ...string) (Image, error) {
	bin := filepath.Join(dir, "manager")
	if err := gobuild.Module(ctx, bin, "."); err != nil {
		return Image{}, err
	}
	return operatorImage(dir, bin, ref, aliases...)
}

// operatorImage is Operator's image around a built manager binary.
func operatorImage(dir, bin, ref string, aliases ...string) (Image, error) {
	return dockerfileImage("", []string{"VERSION"}, "manager", bin, filepath.Join(dir, "operator.tar"), ref, aliases...)
}

// dockerBuildArgs are the build arguments `make docker-build` passes to
// the build of an image (--build-arg NAME=$(NAME) for each of names): the
// Makefile's defaults of those variables.
func dockerBuildArgs(names ...string) (map[string]string, error) {
	args := map[string]string{}
	for _, n := range names {
		v, err := repo.MakeDefault(n)
		if err != nil {
			return nil, err
		}
		args[n] = v
	}
	return args, nil
}

// dockerfileImage writes to archive the image of the Dockerfile's stage
// called stageName (the final stage when empty), built with the Makefile's
// values of the build arguments buildArgs as make docker-build gives them,
// tagged ref and each of aliases: on the distroless base, bin as the one
// file the stage copies from a build stage, which it must call name, and
// the files it copies from the build context (the repository), placed,
// configured and labelled as the stage says.
func dockerfileImage(stageName string, buildArgs []string, name, bin, archive, ref string, aliases ...string) (Image, error) {
	args, err := dockerBuildArgs(buildArgs...)
	if err != nil {
		return Image{}, err
	}
	stage, err := ParseDockerfileStage(filepath.Join(repo.Root(), "Dockerfile"), stageName, args)
	if err != nil {
		return Image{}, err
	}
	entries := []entry{
		{path: "/etc/passwd", mode: 0o644, data: []byte(distrolessPasswd)},
		{path: "/etc/group", mode: 0o644, data: []byte(distrolessGroup)},
		{path: "/tmp", mode: 0o1777, dir: true},
	}
	var binaries int
	for _, c := range stage.Copies {
		var e entry
		if c.From != "" {
			// A build stage's output: the binary, built here instead.
			if path.Base(c.Source) != name {
				return Image{}, fmt.Errorf("the Dockerfile's stage %q copies %s from stage %s; package images knows how to build only %s there", stageName, c.Source, c.From, name)
			}
			binaries++
			e, err = hostExecutable(bin, copyDest(stage, c))
		} else {
			e, err = contextFile(c.Source, copyDest(stage, c))
		}
		if err != nil {
			return Image{}, err
		}
		entries = append(entries, e)
	}
	if binaries != 1 {
		return Image{}, fmt.Errorf("the Dockerfile's stage %q copies %v; package images needs exactly one copy of %s from a build stage", stageName, stage.Copies, name)
	}
	ports := map[string]struct{}{}
	for _, p := range stage.ExposedPorts {
		ports[p] = struct{}{}
	}
	return write(archive, entries, v1.Config{
		User:         stage.User,
		Entrypoint:   stage.Entrypoint,
		WorkingDir:   stage.WorkingDir,
		Labels:       stage.Labels,
		ExposedPorts: ports,
		Env:          []string{defaultPath},
	}, ref, aliases...)
}

// copyDest is where COPY c puts its file: a destination that is a
// directory (".", or ending in "/") keeps the source's name, relative to
// the stage's working directory.
func copyDest(stage Stage, c Copy) string {
	dst := c.Dest
	if dst == "." || strings.HasSuffix(dst, "/") {
		dst = path.Join(dst, path.Base(c.Source))
	}
	if !path.IsAbs(dst) {
		dst = path.Join(stage.WorkingDir, dst)
	}
	return dst
}

// contextFile is an entry holding the file src of the build context, which
// is the repository, at dst with its permissions, as COPY makes it. Only
// single files are copied: a directory or a pattern is refused.
func contextFile(src, dst string) (entry, error) {
	p := filepath.Join(repo.Root(), filepath.FromSlash(src))
	fi, err := os.Stat(p)
	if err != nil {
		return entry{}, fmt.Errorf("the Dockerfile copies %s from the build context: %w", src, err)
	}
	if !fi.Mode().IsRegular() {
		return entry{}, fmt.Errorf("the Dockerfile copies %s from the build context; package images copies only single files", src)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return entry{}, err
	}
	return entry{path: dst, mode: int64(fi.Mode().Perm()), data: data}, nil
}
