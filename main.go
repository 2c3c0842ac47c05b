// Command manager runs the memcached-operator: the Memcached reconciler and
// its admission webhooks (package cmd/manager/app).
package main

import (
	"os"

	"github.com/example-inc/memcached-operator/cmd/manager/app"
)

func main() {
	os.Exit(app.Main(os.Args[1:]))
}
