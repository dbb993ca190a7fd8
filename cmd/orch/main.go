// Command orch drives an AI-assisted code change through a gated,
// auditable lifecycle. See the README and docs/.
package main

import (
	"os"

	"github.com/orchdev/orch/internal/cli"
)

func main() {
	startGC()
	os.Exit(cli.Main())
}
