package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/orchdev/orch/internal/exit"
	"github.com/orchdev/orch/internal/gitx"
	"github.com/orchdev/orch/internal/task"
	"github.com/orchdev/orch/internal/testrun"
)

var errNotGitRepo = exit.NewSentinel(exit.Usage, "not a git repository")

func newInitCmd(env *Env) *cobra.Command {
	return &cobra.Command{
		Use:     "init",
		Short:   "create .orch/ at the top of the current git repository",
		Example: `  cd my-repo && orch init`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			top, err := gitTopLevel(cmd.Context(), env.Dir)
			if err != nil {
				return err
			}
			p, created, err := task.InitProject(top)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if created {
				fmt.Fprintf(out, "initialized %s\n", p.Dir)
			} else {
				fmt.Fprintf(out, "%s already exists; nothing changed\n", p.Dir)
			}
			for _, n := range testrun.DotFolderNotes(top) {
				fmt.Fprintf(out, "note: %s\n", n)
			}
			if created {
				fmt.Fprintf(out, "next: orch new \"describe the change\"\n")
			}
			return nil
		},
	}
}

// gitTopLevel asks the real git binary for the repository's top level.
func gitTopLevel(ctx context.Context, dir string) (string, error) {
	repo, err := gitx.Open(ctx, dir)
	if errors.Is(err, gitx.ErrNotRepo) {
		return "", fmt.Errorf("%s is not inside a git repository: run `git init` first: %w", dir, errNotGitRepo)
	}
	if err != nil {
		return "", fmt.Errorf("run git: %w (is git installed?)", err)
	}
	return repo.Dir, nil
}
