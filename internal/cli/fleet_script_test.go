package cli

import (
	"os"
	"path/filepath"

	"github.com/orchdev/orch/internal/fleetlink/fleetlinktest"
)

// fleetStandIn is orch-fleet in the scripts (fleet_routing.txtar): the
// stand-in of fleetlinktest, answering from $WORK/fleet.
func fleetStandIn() int { return fleetlinktest.StandIn(filepath.Join(os.Getenv("WORK"), "fleet")) }
