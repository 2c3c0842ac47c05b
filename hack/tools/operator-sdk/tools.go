//go:build tools

// Package tools pins the operator-sdk CLI; `make operator-sdk` builds it from
// this module. operator-sdk cannot be `go install`ed (its go.mod has replace
// directives), so this module copies its go.mod (replace block included) and
// requires it. golang.org/x/tools is bumped to v0.34.0: the pinned v0.9.1 does
// not compile with Go >= 1.24.
package tools

import _ "github.com/operator-framework/operator-sdk/cmd/operator-sdk"
