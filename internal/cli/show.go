package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/clip"
	"github.com/orchdev/orch/internal/exit"
	"github.com/orchdev/orch/internal/termtext"
)

// shown are the artifacts `orch show` prints, by name, in the order of the
// lifecycle; diff is printed as a diff, the test reports laid out from
// their JSON, the others as Markdown. when says when the writer writes it,
// if not every time.
var shown = []struct{ name, path, writer, when string }{
	{"brief", artifact.BriefFile, "orch new", ""},
	{"plan", artifact.PlanMarkdownFile, "orch plan", ""},
	{"plan-review", artifact.PlanReviewMarkdownFile, "orch review plan", ""},
	{"diff", artifact.DiffFile, "orch codegen", ""},
	{"code-review", artifact.CodeReviewMarkdownFile, "orch review code", ""},
	{"test", artifact.TestReportFile, "orch test", ""},
	{"advice", artifact.AdviceMarkdownFile, "orch advise", ""},
	{"summary", artifact.AcceptSummaryFile, "orch accept", ""},
	{"regression", artifact.RegressionReportFile, "orch accept", " when HEAD had moved since the base (its regression check)"},
}

func shownNames() []string {
	var out []string
	for _, s := range shown {
		out = append(out, s.name)
	}
	return out
}

func newShowCmd(env *Env) *cobra.Command {
	var id string
	cmd := &cobra.Command{
		Use:   "show " + strings.Join(shownNames(), "|"),
		Short: "print a task's plan, reviews, diff, test report, advice or accept summary, rendered for the terminal",
		Long: `Print one of the task's readable artifacts: Markdown (the plan, the reviews,
the advice, the accept summary) laid out for the terminal — headings, lists,
tables — the diff coloured, and the test report (test/report.json; with
regression, accept's re-run after HEAD had moved) as what ran: the sandbox,
each suite's command, exit status and counts, and each failing test by name
with the end of its output. In a terminal the output goes through the
pager (ORCH_PAGER, else PAGER, else less -FRX; --no-pager turns it off);
piped, it is the file as written. Colours follow NO_COLOR and TERM=dumb.`,
		Example: `  orch show plan
  orch show code-review --task 0007-add-retry
  orch show test
  orch show plan | grep -i retry
  orch show test | jq .summary`,
		// Without an argument (or with a wrong one) the choices are the
		// answer, in the syntax at hand (orch show plan, /show plan).
		Args: func(_ *cobra.Command, args []string) error {
			switch len(args) {
			case 0:
				return exit.New(exit.ErrUsage, "show: which artifact? one of %s", strings.Join(shownNames(), ", ")).
					WithHint("for example `%s`", env.command("show plan"))
			case 1:
				return nil
			}
			return exit.New(exit.ErrUsage, "show: one artifact at a time (got %d): one of %s", len(args), strings.Join(shownNames(), ", "))
		},
		ValidArgs: shownNames(),
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, s := range shown {
				if s.name == args[0] {
					return env.showArtifact(cmd, id, s.path, s.writer, s.when)
				}
			}
			if near := clip.Nearest(args[0], shownNames()); near != "" {
				return exit.New(exit.ErrUsage, "show: unknown artifact %q (did you mean %q?): one of %s", args[0], near, strings.Join(shownNames(), ", "))
			}
			return exit.New(exit.ErrUsage, "show: unknown artifact %q: one of %s", args[0], strings.Join(shownNames(), ", "))
		},
	}
	taskFlag(cmd, &id)
	return cmd
}

func newDiffCmd(env *Env) *cobra.Command {
	var id string
	cmd := &cobra.Command{
		Use:   "diff",
		Short: "print the task's change (code/diff.patch), coloured in a terminal",
		Long: `Print code/diff.patch of the task: the unified diff of code/files against the
base commit. In a terminal it is coloured and goes through the pager
(ORCH_PAGER, else PAGER, else less -FRX; --no-pager turns it off).`,
		Example: `  orch diff
  orch diff --no-pager | git apply --stat`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return env.showArtifact(cmd, id, artifact.DiffFile, "orch codegen", "")
		},
	}
	taskFlag(cmd, &id)
	return cmd
}

// style is how to print for out: laid out in a terminal, coloured when the
// environment allows it.
func (env *Env) style(out io.Writer) termtext.Style {
	term := isTerminal(out)
	return termtext.Style{Terminal: term, Color: term && termtext.ColorAllowed(env.Getenv), Width: termWidth(out)}
}

// showArtifact prints the task's artifact at rel (a diff, a test report or
// Markdown), through the pager in a terminal. writer is the command that
// writes it, and when says when it does if not every time.
func (env *Env) showArtifact(cmd *cobra.Command, id, rel, writer, when string) error {
	t, err := env.openTask(id)
	if err != nil {
		return err
	}
	st := env.style(cmd.OutOrStdout())
	st.Slash = env.REPL
	path := filepath.Join(t.Dir, filepath.FromSlash(rel))
	// Read before the pager starts: a missing file is an error on the
	// terminal, not an empty pager.
	// Only a regular file inside the task folder, never a symbolic link,
	// a named pipe or a device, and without blocking on one.
	f, _, err := artifact.OpenRegular(t.Dir, rel)
	if errors.Is(err, fs.ErrNotExist) {
		return &exit.Error{Kind: exit.ErrInvalid, Msg: fmt.Sprintf("task %s has no %s yet: `%s` writes it%s", t.ID, rel, env.command(strings.TrimPrefix(writer, "orch ")), when), Err: err}
	} else if err != nil {
		return exit.New(exit.ErrInvalid, "task %s: %w", t.ID, err)
	}
	f.Close()
	switch rel {
	case artifact.TestReportFile, artifact.RegressionReportFile:
		return env.showTestReport(cmd, t.ID, path, rel, st)
	}
	out := env.paged(cmd)
	if rel == artifact.DiffFile {
		return termtext.ShowDiff(out, path, st)
	}
	return termtext.ShowMarkdown(out, path, st)
}

// showHint says how to read an artifact a command just wrote, rendered
// (the REPL shows it by itself).
func (env *Env) showHint(out io.Writer, name string) {
	if !env.REPL {
		fmt.Fprintf(out, "read it: orch show %s\n", name)
	}
}

// showTestReport prints a test report: laid out in a terminal, the file as
// written (sanitized, like every output) when piped. A report that is not
// valid is an error in a terminal, before the pager starts; piped, it is
// printed as it is, for a look at what is wrong.
func (env *Env) showTestReport(cmd *cobra.Command, id, path, rel string, st termtext.Style) error {
	data, truncated, err := termtext.ReadCapped(path, artifact.MaxJSONBytes)
	if err != nil {
		return exit.New(exit.ErrInvalid, "task %s: %w", id, err)
	}
	if !st.Terminal {
		_, err := io.WriteString(env.paged(cmd), termtext.Sanitize(string(data)))
		return err
	}
	if truncated {
		return exit.New(exit.ErrInvalid, "task %s: %s is larger than %d bytes", id, rel, artifact.MaxJSONBytes)
	}
	file := ".orch/tasks/" + id + "/" + rel
	var b strings.Builder
	if err := renderTestReport(&b, rel, data, st, file); err != nil {
		return exit.New(exit.ErrInvalid, "task %s: %w", id, err).WithHint("the file as written: %s", file)
	}
	_, err = io.WriteString(env.paged(cmd), b.String())
	return err
}
