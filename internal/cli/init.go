package cli

import (
	"bytes"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/orchdev/orch/internal/task"
)

var errNotGitRepo = errors.New("not a git repository")

func newInitCmd(env *Env) *cobra.Command {
	return &cobra.Command{
		Use:     "init",
		Short:   "create .orch/ at the top of the current git repository",
		Example: `  cd my-repo && orch init`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			top, err := gitTopLevel(env.Dir)
			if err != nil {
				return err
			}
			p, created, err := task.InitProject(top)
			if err != nil {
				return err
			}
			if created {
				fmt.Fprintf(cmd.OutOrStdout(), "initialized %s\nnext: orch new \"describe the change\"\n", p.Dir)
			} else {
				fmt.Fprintf(cmd.OutOrStdout(), "%s already exists; nothing changed\n", p.Dir)
			}
			return nil
		},
	}
}

// gitTopLevel asks the real git binary for the repository's top level.
func gitTopLevel(dir string) (string, error) {
	cmd := exec.Command("git", "rev-parse", "--show-toplevel")
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return "", fmt.Errorf("orch: %s is not inside a git repository: run `git init` first (git said: %s): %w", dir, strings.TrimSpace(errb.String()), errNotGitRepo)
		}
		return "", fmt.Errorf("orch: run git: %w (is git installed?)", err)
	}
	return filepath.Clean(strings.TrimSpace(out.String())), nil
}
