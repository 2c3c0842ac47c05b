// Package gobuild builds the Go binaries the suites run, the way the
// Dockerfile builds the operator's: static (no cgo), -trimpath, with the
// local toolchain and, for this module's binaries, the Go Cryptographic
// Module the Makefile's GOFIPS140 names.
//
// The images the real node runs and the manager the suites run as a process
// go through the same function, so that they are the same build and share
// one set of compiled packages in the build cache: each different set of
// flags or GOFIPS140 compiles every dependency again, minutes on a clean
// machine.
package gobuild
