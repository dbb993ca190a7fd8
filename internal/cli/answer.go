package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/orchdev/orch/internal/agent/planner"
	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/termtext"
)

// answerOutput is what `orch answer --json` prints.
type answerOutput struct {
	Task     string   `json:"task"`
	Question string   `json:"question"`
	Answer   string   `json:"answer"`
	Previous *string  `json:"previous"`
	Open     []string `json:"open_questions"`
}

func newAnswerCmd(env *Env) *cobra.Command {
	var id string
	var asJSON bool
	var wait time.Duration
	var ff fleetFlags
	cmd := &cobra.Command{
		Use:   "answer ID TEXT",
		Short: "answer a planner's question (no model is called)",
		Long: `Record your answer to question ID of the plan in planning/planning.ai.json
(every other field is kept as it is), log it in the transcript as user input and
in planning/meeting.jsonl. TEXT is the rest of the arguments joined by spaces;
"-" reads the answer from stdin.

The task must be in planning, with no planning round running. The next
` + "`orch plan`" + ` round plans with the answer; the planner cannot drop or change it.`,
		Example: `  orch answer q1 "exponential backoff, at most 5 attempts"
  orch answer q2 use the existing http client
  echo "keep the old flag as an alias" | orch answer q3 -`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			qid := args[0]
			text := strings.Join(args[1:], " ")
			if len(args) == 2 && args[1] == "-" {
				data, err := io.ReadAll(io.LimitReader(cmd.InOrStdin(), planner.MaxAnswerBytes+1))
				if err != nil {
					return fmt.Errorf("read the answer from stdin: %w", err)
				}
				text = strings.TrimRight(string(data), "\r\n")
			}
			if l, tid, err := env.fleetTask(ff, id); err != nil || l != nil {
				if err != nil {
					return err
				}
				res, err := l.Answer(cmd.Context(), tid, qid, text)
				if err != nil {
					return err
				}
				return printGate(cmd.OutOrStdout(), asJSON, "answered "+termtext.Line(qid), res)
			}
			o, tid, err := env.orchestratorFor(wait, id)
			if err != nil {
				return err
			}
			res, err := planner.AnswerQuestion(cmd.Context(), o, tid, qid, text)
			if err != nil {
				return err
			}
			open := make([]string, len(res.Open))
			for i, q := range res.Open {
				open[i] = q.ID
			}
			out := cmd.OutOrStdout()
			if asJSON {
				return json.NewEncoder(out).Encode(answerOutput{Task: tid, Question: qid, Answer: text, Previous: res.Previous, Open: open})
			}
			verb := "answered"
			if res.Previous != nil && strings.TrimSpace(*res.Previous) != "" {
				verb = "changed the answer to"
			}
			fmt.Fprintf(out, "%s %s in %s: %s\n", verb, termtext.Line(qid), artifact.PlanFile, termtext.Line(res.Question.Text))
			if len(open) > 0 {
				fmt.Fprintf(out, "still open: %s (answer with `%s`)\n", strings.Join(open, ", "), env.command("answer ID TEXT"))
			} else {
				fmt.Fprintln(out, "no open blocking question left")
			}
			fmt.Fprintf(out, "next: `%s` runs the next planning round with your answer\n", env.command("plan"))
			return nil
		},
	}
	taskFlag(cmd, &id)
	waitFlag(cmd, &wait)
	fleetFlagsOn(cmd, &ff)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the recorded answer as one JSON object")
	return cmd
}
