//go:build tools

// Package tools pins Operator Lifecycle Manager (v0); `make olm` builds its
// olm and catalog commands from this module. The module copies OLM's own
// go.mod (module renamed, its retract line dropped) so that every dependency
// resolves to the version OLM itself was released with.
package tools

import (
	_ "github.com/operator-framework/operator-lifecycle-manager/cmd/catalog"
	_ "github.com/operator-framework/operator-lifecycle-manager/cmd/olm"
)
