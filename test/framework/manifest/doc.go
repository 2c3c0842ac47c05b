// Package manifest reads the repository's manifests as the tools that
// apply them do: a YAML stream into objects, and bundle/ as OLM's tooling
// loads it, with the manager Deployment its CSV installs. test/bundle checks
// these files and test/e2e checks the same ones against a cluster, so both
// read them here.
package manifest
