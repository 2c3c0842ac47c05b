// Package repo finds the files of this repository that the tests share: the
// generated CRDs and webhook manifests, the tools the Makefile builds into
// bin/, and the Kubernetes version they are built at.
package repo
