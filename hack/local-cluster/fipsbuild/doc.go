// Package fipsbuild checks that a Go binary of this project was built with
// the Go Cryptographic Module the Makefile names (GOFIPS140) and so runs in
// FIPS 140-3 mode by default, from the build information the Go toolchain
// writes into every binary (what `go version -m` prints):
//
//	if err := fipsbuild.Check(bin); err != nil { ... }
//
// Settings reads any binary's build settings, for a test that checks
// another binary was built without them.
package fipsbuild
