//go:build tools

// Package tools pins openshift-preflight, Red Hat's certification checks,
// for `make preflight` (hack/tools.mk), which test/preflight runs against the
// operator image. It is built from this wrapper module because `go install
// ...@v1.14.1` fails here: the module proxy serves that version but no
// version list, and go install asks for the list.
package tools

import _ "github.com/redhat-openshift-ecosystem/openshift-preflight/cmd/preflight"
