// Command devserver runs Temporal's development server inside its own
// process: the server of go.temporal.io/server's temporaltest package, with
// its store in memory (SQLite), listening on loopback only, and one
// namespace. It prints one line,
//
//	address=127.0.0.1:PORT namespace=NAME
//
// and serves until it receives SIGINT or SIGTERM. Everything is lost when
// it stops.
//
// It is its own Go module so that the Temporal server is never linked into
// orch or orch-fleet, nor built by `go build ./...` of orch's module: the
// fleet's end-to-end test builds it (docs/fleet.md, "One machine"), and a
// person trying the fleet on one machine runs it with `go run .` in this
// folder.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"go.temporal.io/server/temporaltest"
)

func main() {
	ts := temporaltest.NewServer()
	fmt.Printf("address=%s namespace=%s\n", ts.GetFrontendHostPort(), ts.GetDefaultNamespace())
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	<-sig
	ts.Stop()
}
