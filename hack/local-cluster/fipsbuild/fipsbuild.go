package fipsbuild

import (
	"debug/buildinfo"
	"fmt"
	"slices"
	"strings"

	"github.com/example-inc/memcached-operator/hack/repo"
)

// Check fails unless the binary at path records GOFIPS140 at the module
// version the Makefile names (Go records the version with its snapshot's
// suffix: v1.0.0-c2097c7c for v1.0.0) and a default GODEBUG with
// fips140=on, which GOFIPS140 sets.
func Check(path string) error {
	settings, err := Settings(path)
	if err != nil {
		return err
	}
	want := repo.GoFIPS140()
	if got := settings["GOFIPS140"]; got != want && !strings.HasPrefix(got, want+"-") {
		return fmt.Errorf("%s: built with GOFIPS140=%q, want the Go Cryptographic Module %s", path, got, want)
	}
	if godebug := settings["DefaultGODEBUG"]; !slices.Contains(strings.Split(godebug, ","), "fips140=on") {
		return fmt.Errorf("%s: default GODEBUG %q lacks fips140=on", path, godebug)
	}
	return nil
}

// Settings are the build settings the binary at path records (CGO_ENABLED,
// GOFIPS140, -trimpath, ...), by name.
func Settings(path string) (map[string]string, error) {
	info, err := buildinfo.ReadFile(path)
	if err != nil {
		return nil, err
	}
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	return settings, nil
}
