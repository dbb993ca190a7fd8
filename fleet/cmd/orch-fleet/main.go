// Command orch-fleet is orch's fleet on Temporal (docs/fleet.md): `orch
// worker`, `orch submit`, `orch pull`, `orch fleet` and the fleet's side
// of status, log and the gates. orch runs it for those commands; it is a
// binary of its own so that the Temporal SDK is never linked into orch.
package main

import (
	"os"

	"github.com/orchdev/orch/fleet/fleetcli"
)

func main() { os.Exit(fleetcli.Main(os.Args[1:])) }
