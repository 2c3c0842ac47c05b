// Package apicount counts the requests a client makes to the API server, by
// verb and resource, so tests and benchmarks can assert how many writes an
// operator costs the control plane.
//
//	counter := apicount.New()
//	cfg := counter.Wrap(rest.CopyConfig(base))
//	... run the operator with cfg ...
//	writes := counter.Writes()
package apicount
