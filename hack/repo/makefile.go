package repo

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
)

// MakeDefault is the default the Makefile gives its variable name (its
// `NAME ?= value` line, trimmed): what `make bundle` or `make docker-build`
// uses when the variable is not set, and so what the committed bundle and
// the images are made with. An empty default is returned as "".
func MakeDefault(name string) (string, error) {
	path := filepath.Join(Root(), "Makefile")
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	m := regexp.MustCompile(`(?m)^`+regexp.QuoteMeta(name)+`[ \t]*\?=[ \t]*(.*?)[ \t]*$`).FindAllSubmatch(data, -1)
	if len(m) != 1 {
		return "", fmt.Errorf("%s: want one %q line, found %d", path, name+" ?=", len(m))
	}
	return string(m[0][1]), nil
}
