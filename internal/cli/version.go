package cli

import (
	"encoding/json"
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

// BuildInfo is what `orch version --json` prints: the module version and
// the VCS revision the binary was built from, as the Go toolchain recorded
// them (`go install` and `go build` in a checkout record both; `go run`
// records no revision).
type BuildInfo struct {
	Version   string `json:"version"`            // module version, "(devel)" for a checkout build
	Revision  string `json:"revision,omitempty"` // vcs.revision
	Time      string `json:"time,omitempty"`     // vcs.time
	Modified  bool   `json:"modified,omitempty"` // vcs.modified: built with uncommitted changes
	GoVersion string `json:"go_version"`         // the toolchain that built the binary
	Platform  string `json:"platform,omitempty"` // GOOS/GOARCH
}

// readBuildInfo reads the binary's build information.
func readBuildInfo() BuildInfo {
	var b BuildInfo
	info, ok := debug.ReadBuildInfo()
	if !ok {
		b.Version = "unknown"
		return b
	}
	b.Version = info.Main.Version
	if b.Version == "" {
		b.Version = "(devel)"
	}
	b.GoVersion = info.GoVersion
	var goos, goarch string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Revision = s.Value
		case "vcs.time":
			b.Time = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		case "GOOS":
			goos = s.Value
		case "GOARCH":
			goarch = s.Value
		}
	}
	if goos != "" && goarch != "" {
		b.Platform = goos + "/" + goarch
	}
	return b
}

// String is the one-line form: "orch v1.2.3 (rev abc123def456, dirty, go1.26.8 linux/amd64)".
func (b BuildInfo) String() string {
	var parts []string
	if b.Revision != "" {
		rev := b.Revision
		if len(rev) > 12 {
			rev = rev[:12]
		}
		parts = append(parts, "rev "+rev)
		if b.Modified {
			parts = append(parts, "modified")
		}
	} else if b.Version == "(devel)" {
		// `go run` and builds outside a clone record no commit: say so
		// rather than leave the reader to guess.
		parts = append(parts, "no commit recorded: built by go run or outside a git clone")
	}
	if b.Time != "" {
		parts = append(parts, b.Time)
	}
	parts = append(parts, strings.TrimSpace(b.GoVersion+" "+b.Platform))
	return fmt.Sprintf("orch %s (%s)", b.Version, strings.Join(parts, ", "))
}

func newVersionCmd(*Env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "print orch's version and the revision it was built from",
		Long: `Print the module version and the VCS revision recorded in the binary by the Go
toolchain (a binary built by go run carries no revision). orch --version prints
the same line.`,
		Example: `  orch version
  orch version --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			b := readBuildInfo()
			if asJSON {
				return json.NewEncoder(cmd.OutOrStdout()).Encode(b)
			}
			fmt.Fprintln(cmd.OutOrStdout(), b.String())
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print {version, revision, time, modified, go_version, platform}")
	return cmd
}
