package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/orchdev/orch/internal/exit"
	"github.com/orchdev/orch/internal/task"
)

func newNewCmd(env *Env) *cobra.Command {
	var id string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "new [--id ID] BRIEF",
		Short: "create a task in phase planning and make it current",
		Long: `Create a task in phase planning with BRIEF as planning/brief.md and make it the
current task. BRIEF is the arguments joined by spaces, or standard input when it is "-".`,
		Example: `  orch new "add retry with backoff to the HTTP client"
  orch new --id fix-login "fix the login redirect loop"
  git log -1 --format=%B | orch new -`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			brief := strings.Join(args, " ")
			if brief == "-" {
				b, err := io.ReadAll(io.LimitReader(cmd.InOrStdin(), 1<<20))
				if err != nil {
					return fmt.Errorf("read brief from stdin: %w", err)
				}
				brief = string(b)
			}
			if strings.TrimSpace(brief) == "" {
				return exit.New(exit.ErrUsage, "the brief is blank: say what the change should do, e.g. orch new \"add a --verbose flag\"")
			}
			p, err := env.project()
			if err != nil {
				return err
			}
			if err := p.CleanStrays(); err != nil {
				return err
			}
			if id == "" {
				if id, err = p.NewID(brief); err != nil {
					return err
				}
			} else if err := task.ValidID(id); err != nil {
				return err
			}
			t, st, err := p.CreateTask(id, brief, env.Now().UTC())
			if err != nil {
				return err
			}
			if asJSON {
				return json.NewEncoder(cmd.OutOrStdout()).Encode(map[string]any{"task": t.ID, "phase": st.Phase, "revision": st.Revision, "dir": t.Dir})
			}
			fmt.Fprintf(cmd.OutOrStdout(), "created task %s in phase %s (now current)\n  folder: %s\nnext: write planning/planning.ai.json (or run the planner: `%s`), then `%s`\n", t.ID, st.Phase, t.Dir, env.command("plan"), env.command("next"))
			return nil
		},
	}
	cmd.Flags().StringVar(&id, "id", "", "task id (default: NNNN-slug from the brief)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print {task, phase, revision, dir} as JSON")
	return cmd
}
