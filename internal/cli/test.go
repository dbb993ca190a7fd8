package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/config"
	"github.com/orchdev/orch/internal/exit"
	"github.com/orchdev/orch/internal/lazyre"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/orchestrator"
	"github.com/orchdev/orch/internal/testphase"
	"github.com/orchdev/orch/internal/worker"
)

func newTestCmd(env *Env) *cobra.Command {
	var id, sandbox string
	var keep, asJSON, exitCode, verbose bool
	var wait time.Duration
	var local bool
	cmd := &cobra.Command{
		Use:   "test",
		Short: "run the test and lint suites on the change, in an isolated worktree",
		Long: `Create a detached git worktree of the base commit (code/codegen.json's base, or
HEAD), apply code/diff.patch there, and run the suites of .orch/config.toml (or
the ones detected from the repository) in it, under bubblewrap when available:
no network, read-only root, only the worktree and a private /tmp writable.
Writes test/report.json and test/logs/. Your working tree is never touched.
How the suites ran — the sandbox, the environment, the limits, the warm
worktree and build cache — is one line ("sandbox: bwrap, no network, …");
-v prints those notes whole, and test/report.json keeps them all.

From review, orch test first takes review → test (its condition must hold).
Then ` + "`orch next`" + ` decides: failures go back to codegen, a pass goes to accept.

Exit 0 when the suites ran, whether the tests passed or failed (read the
summary, or use --exit-code); 4 when the runner itself failed (the patch does
not apply, a command is missing) or no test ran. With --exit-code, like
` + "`git diff --exit-code`" + `, failing tests exit 9.`,
		Example: `  orch test
  orch test --keep              # leave the worktree for a look
  orch test --sandbox none      # opt out of the sandbox (recorded in the report)
  orch test --exit-code         # exit 9 when a test failed (for scripts and CI)`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			switch sandbox {
			case "", "auto", "bwrap", "none":
			default:
				return exit.New(exit.ErrUsage, "--sandbox: expected auto, bwrap or none, got %q", sandbox)
			}
			o, cfg, tid, err := env.phaseSetup(wait, id)
			if err != nil {
				return err
			}
			if err := notInFleet(o.Project, cfg, tid, "`orch test`", local); err != nil {
				return err
			}
			if err := env.wrongPhase(o, tid, lifecycle.Test); err != nil {
				return err
			}
			stream := cmd.OutOrStdout()
			if asJSON {
				stream = cmd.ErrOrStderr()
			}
			w, err := work(cmd.Context(), worker.Deps{Orch: o, Config: cfg}, lifecycle.Test, worker.Run{Task: tid, Test: &testphase.Options{Keep: keep, Sandbox: sandbox, Stream: stream, Env: env.environ()}})
			if err != nil {
				return err
			}
			res := *w.Test
			out := cmd.OutOrStdout()
			rep := res.Report
			if asJSON {
				if err := json.NewEncoder(out).Encode(rep); err != nil {
					return err
				}
			} else {
				printEntered(out, w.Phase.Entered)
				printTestNotes(out, rep.Sandbox, rep.Notes, verbose, env.command("test -v"))
				for _, s := range rep.Suites {
					judged := ""
					if s.JudgedBy == artifact.JudgedByExitCode {
						judged = ", judged by its exit code"
					}
					fmt.Fprintf(out, "suite %-12s %-4s exit %-3d pass=%-5v %s  (%s%s)\n", s.ID, s.Kind, s.ExitCode, s.OverallPass, s.Summary, s.Log, judged)
				}
				sb := ""
				if rep.Sandbox != "" {
					sb = ", sandbox " + rep.Sandbox
				}
				fmt.Fprintf(out, "report: %s (status %s, overall_pass %v%s)\n", artifact.TestReportFile, rep.Status, rep.OverallPass, sb)
				if res.Worktree != "" {
					fmt.Fprintf(out, "worktree kept: %s (remove it with: git worktree remove --force %s)\n", res.Worktree, res.Worktree)
				}
			}
			if rep.Status == artifact.TestError {
				return exit.New(exit.ErrInvalid, "the test runner failed (not a test failure): %s", rep.Error)
			}
			if rep.Status == artifact.TestNoTests {
				return exit.New(exit.ErrInvalid, "no test ran (not a test failure): %s", rep.Error)
			}
			if !asJSON {
				if rep.OverallPass {
					fmt.Fprintf(out, "tests passed: `%s` moves to accept\n", env.command("next"))
				} else {
					fmt.Fprintf(out, "tests failed: `%s` goes back to codegen; the failing tests and their output: `%s`\n", env.command("next"), env.command("show test"))
				}
			}
			if exitCode && !rep.OverallPass {
				return exit.New(exit.ErrFailed, "tests failed: %d failed, %d errors (%s)", rep.Summary.Failed, rep.Summary.Error, artifact.TestReportFile)
			}
			return nil
		},
	}
	taskFlag(cmd, &id)
	waitFlag(cmd, &wait)
	localFlag(cmd, &local)
	cmd.Flags().BoolVar(&keep, "keep", false, "keep the worktree and print its path")
	cmd.Flags().StringVar(&sandbox, "sandbox", "", "auto, bwrap or none (default: .orch/config.toml's test.sandbox)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print test/report.json's content; suite output goes to stderr")
	cmd.Flags().BoolVarP(&verbose, "verbose", "v", false, "print every note on how the suites ran (the sandbox, environment, limits, worktree and cache) whole")
	cmd.Flags().BoolVar(&exitCode, "exit-code", false, "exit 9 when the suites ran and a test failed (default: 0, read the summary)")
	return cmd
}

// phaseSetup loads the orchestrator, the configuration and the task id.
func (env *Env) phaseSetup(wait time.Duration, id string) (*orchestrator.Orchestrator, config.Config, string, error) {
	o, err := env.orchestrator(wait)
	if err != nil {
		return nil, config.Config{}, "", err
	}
	cfg, err := config.Load(o.Project.Dir)
	if err != nil {
		return nil, cfg, "", err
	}
	tid, err := taskID(o.Project, id)
	return o, cfg, tid, err
}

// environ returns the environment for child processes.
func (env *Env) environ() []string {
	if env.Environ != nil {
		return env.Environ()
	}
	return nil
}

func printEntered(w interface{ Write([]byte) (int, error) }, nr *orchestrator.NextResult) {
	if nr != nil {
		fmt.Fprintf(w, "%s: %s → %s (%s)\n", nr.Task, nr.From, nr.To, nr.Reason)
	}
}

// routineNotes start the notes that describe how every run is made (the
// sandbox, the environment passed, the limits, the warm worktree, the
// warmed build cache, the dependency and build caches shown): orch test
// sums them up in one line unless -v.
// Every other note (no base commit, the repository changed, a warm-up
// that failed) is printed whole.
var routineNotes = []string{
	"bwrap sandbox: ",
	"sandbox disabled (",
	"environment passed to the suites",
	"limits: ",
	"tests run in the warm test worktree ",
	"tests run in a new warm test worktree ",
	"go build cache warmed by",
	"dependency caches shown read-only: ",
	"build caches kept between runs ",
}

func routineNote(n string) bool {
	for _, p := range routineNotes {
		if strings.HasPrefix(n, p) {
			return true
		}
	}
	return false
}

// tmpfsSize finds the bound on each writable tmpfs in the sandbox's note.
var tmpfsSize = lazyre.New(`each tmpfs at most ([0-9.]+ [KMGT]?i?B)`)

// sandboxLine sums up how the suites ran in one line.
func sandboxLine(sandbox string, notes []string) string {
	var line string
	switch sandbox {
	case "none":
		line = "sandbox: none (an explicit opt-out): the suites ran with your full access to files, network and credentials"
	case "":
		line = "sandbox: not recorded"
	default:
		line = "sandbox: " + sandbox + ", no network, system folders read-only, writable: the worktree and a private /tmp"
		for _, n := range notes {
			if m := tmpfsSize.FindStringSubmatch(n); m != nil {
				line += " (" + m[1] + " each)"
				break
			}
		}
	}
	return line
}

// printTestNotes prints the run's notes: with verbose all of them; else
// the one-line sandbox summary, where the rest is, and every note that
// is not routine.
func printTestNotes(out io.Writer, sandbox string, notes []string, verbose bool, verboseCmd string) {
	if verbose {
		for _, n := range notes {
			fmt.Fprintf(out, "note: %s\n", n)
		}
		return
	}
	routine := 0
	for _, n := range notes {
		if routineNote(n) {
			routine++
		}
	}
	line := sandboxLine(sandbox, notes)
	if routine > 0 {
		line += fmt.Sprintf("; %d more notes: %s, or %s", routine, verboseCmd, artifact.TestReportFile)
	}
	fmt.Fprintln(out, line)
	for _, n := range notes {
		if !routineNote(n) {
			fmt.Fprintf(out, "note: %s\n", n)
		}
	}
}
