//go:build tools

// Package tools pins opm (operator-registry's CLI); `make opm` builds it from
// this module with -tags "json1 containers_image_openpgp". The proxy lists no
// versions of operator-registry, so the version is always named exactly.
package tools

import _ "github.com/operator-framework/operator-registry/cmd/opm"
