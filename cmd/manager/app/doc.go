/*
Package app is the memcached-operator's manager: its options (flags and the
environment, the Subscription's configuration under OLM), and the wiring of
the controller-runtime manager that runs the Memcached reconciler, the
admission webhooks, the metrics and health endpoints and the serving
certificates they use. The repository's main.go calls Main; the logic lives
in the packages this one wires together.
*/
package app
