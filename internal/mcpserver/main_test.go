package mcpserver_test

import (
	"os"
	"testing"

	"github.com/orchdev/orch/internal/cli"
	"github.com/orchdev/orch/internal/fleetlink/fleetlinktest"
	"github.com/orchdev/orch/internal/gittest"
	"github.com/orchdev/orch/internal/mcpserver"
)

// runOrch makes the test binary run orch itself (cli.Main) instead of the
// tests: the TypeScript client starts it as `orch mcp`.
const runOrch = "ORCH_MCP_TEST_RUN_ORCH"

func TestMain(m *testing.M) {
	if os.Getenv(runOrch) == "1" {
		os.Exit(cli.Main())
	}
	if dir := os.Getenv(mcpserver.FleetAnswersEnv); dir != "" {
		os.Exit(fleetlinktest.StandIn(dir))
	}
	os.Exit(gittest.Main(m))
}
