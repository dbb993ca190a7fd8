package cli

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/task"
)

// Shell completion: cobra's `orch completion bash|zsh|fish|powershell`
// scripts call `orch __complete ARGS…`, which ends here for the values of
// flags and arguments. Values are completed by the flag's name, in one place,
// so every command that has a --task, --to, --from, --until, --verdict,
// --sandbox or --provider flag completes it the same way.

// completeWords returns a completion function offering words that start
// with what was typed.
func completeWords(words ...string) cobra.CompletionFunc {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		var out []string
		for _, w := range words {
			if strings.HasPrefix(w, toComplete) {
				out = append(out, w)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// phaseNames lists the lifecycle's phases in order.
func phaseNames() []string {
	var out []string
	for _, p := range lifecycle.Phases() {
		out = append(out, string(p))
	}
	return out
}

// completeTaskIDs offers the ids of the project's tasks (nothing outside a
// project).
func completeTaskIDs(env *Env) cobra.CompletionFunc {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		p, err := task.FindProject(env.Dir)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		tasks, err := p.List()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var out []string
		for _, t := range tasks {
			if strings.HasPrefix(t.ID, toComplete) {
				out = append(out, t.ID+"\t"+string(t.Phase))
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// completeQuestions offers the ids of the task's questions (open blocking
// ones first) with their text, for `orch answer ID` and `orch run
// --answer ID=TEXT` (with the "=" suffix).
func completeQuestions(env *Env, suffix string) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		noSpace := cobra.ShellCompDirectiveNoFileComp
		if suffix != "" {
			noSpace |= cobra.ShellCompDirectiveNoSpace
		}
		if suffix == "" && len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		id := ""
		if f := cmd.Flags().Lookup("task"); f != nil {
			id = f.Value.String()
		}
		t, err := env.openTask(id)
		if err != nil {
			return nil, noSpace
		}
		plan := artifact.LoadPlan(t.Dir)
		if !plan.OK() {
			return nil, noSpace
		}
		var open, rest []string
		isOpen := map[string]bool{}
		for _, q := range plan.Value.OpenQuestions() {
			isOpen[q.ID] = true
		}
		for _, q := range plan.Value.Questions {
			if !strings.HasPrefix(q.ID, toComplete) {
				continue
			}
			c := q.ID + suffix + "\t" + strings.Join(strings.Fields(q.Text), " ")
			if isOpen[q.ID] {
				open = append(open, c)
			} else {
				rest = append(rest, c)
			}
		}
		return append(open, rest...), noSpace
	}
}

// registerCompletions attaches value completion to every command's flags
// and to the positional arguments that name a phase.
func registerCompletions(root *cobra.Command, env *Env) {
	phases := completeWords(phaseNames()...)
	byFlag := map[string]cobra.CompletionFunc{
		"task":     completeTaskIDs(env),
		"to":       phases,
		"from":     phases,
		"until":    phases,
		"verdict":  completeWords(artifact.VerdictAccepted, artifact.VerdictChangesRequested, artifact.VerdictRejected, artifact.VerdictRevert),
		"sandbox":  completeWords("auto", "bwrap", "none"),
		"provider": completeWords("script", "openai", "anthropic"),
	}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for name, fn := range byFlag {
			if c.Flags().Lookup(name) == nil {
				continue
			}
			if c.Name() == "accept" && name == "to" {
				// accept --to names where changes_requested sends the task.
				fn = completeWords(string(lifecycle.Codegen), string(lifecycle.Review), string(lifecycle.Planning))
			}
			_ = c.RegisterFlagCompletionFunc(name, fn)
		}
		if c.Name() == "answer" {
			c.ValidArgsFunction = completeQuestions(env, "")
		}
		if c.Name() == "run" && c.Flags().Lookup("answer") != nil {
			_ = c.RegisterFlagCompletionFunc("answer", completeQuestions(env, "="))
		}
		if c.Name() == "redo" {
			c.ValidArgsFunction = func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
				if len(args) > 0 {
					return nil, cobra.ShellCompDirectiveNoFileComp
				}
				return phases(cmd, args, toComplete)
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}
