package images

import (
	"context"
	"path/filepath"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/example-inc/memcached-operator/hack/local-cluster/gobuild"
	"github.com/example-inc/memcached-operator/hack/repo"
)

const (
	// scorecardTestPackage is the main package of operator-sdk's
	// scorecard-test image (the built-in basic and olm tests), built from
	// hack/tools/operator-sdk, which pins the operator-sdk that bin/operator-sdk is.
	scorecardTestPackage = "github.com/operator-framework/operator-sdk/images/scorecard-test"
	scorecardTestWrapper = "hack/tools/operator-sdk"
	// scorecardTestBinary, scorecardTestHome and scorecardTestUID are where
	// operator-sdk's images/scorecard-test/Dockerfile puts the binary, the
	// home and working directory it gives the user, and that user's UID.
	scorecardTestBinary = "/usr/local/bin/scorecard-test"
	scorecardTestHome   = "/opt/scorecard-test"
	scorecardTestUID    = "1001"
)

// ScorecardTest writes operator-sdk's scorecard-test image to dir, tagged
// ref: its main package built static at the version hack/tools/operator-sdk
// requires, placed and run as upstream's Dockerfile has it (user 1001 in
// group 0, /opt/scorecard-test as home and working directory), without the
// UBI base, which the binary does not use.
func ScorecardTest(ctx context.Context, dir, ref string) (Image, error) {
	bin := filepath.Join(dir, "scorecard-test")
	if err := gobuild.Static(ctx, filepath.Join(repo.Root(), scorecardTestWrapper), bin, scorecardTestPackage, "-s -w"); err != nil {
		return Image{}, err
	}
	e, err := hostExecutable(bin, scorecardTestBinary)
	if err != nil {
		return Image{}, err
	}
	return write(filepath.Join(dir, "scorecard-test.tar"), []entry{e,
		{path: "/etc/passwd", mode: 0o644, data: []byte("root:x:0:0:root:/root:/sbin/nologin\nscorecard-test:x:" + scorecardTestUID + ":0:scorecard-test user:" + scorecardTestHome + ":/sbin/nologin\n")},
		{path: "/etc/group", mode: 0o644, data: []byte("root:x:0:\n")},
		{path: scorecardTestHome, mode: 0o755, dir: true},
	}, v1.Config{
		User:       scorecardTestUID,
		Entrypoint: []string{scorecardTestBinary},
		Env:        []string{defaultPath, "HOME=" + scorecardTestHome, "USER_NAME=scorecard-test", "USER_UID=" + scorecardTestUID},
		WorkingDir: scorecardTestHome,
	}, ref)
}
