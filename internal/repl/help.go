package repl

import "strings"

// ShowArtifacts are the names /show takes, as `orch show` lists them (a
// test in internal/cli keeps the two equal).
var ShowArtifacts = []string{"brief", "plan", "plan-review", "diff", "code-review", "test", "advice", "summary", "regression"}

// helpText lists the commands.
func helpText() string {
	return `Commands act on the current task, like the orch commands of the same name;
their flags may follow (quote arguments like a shell):
  /plan                       run a planning round, then show planning/plan.md
  /answer ID TEXT             answer the planner's question ID
  /review plan                review the plan, then show review/plan-review.md
  /codegen                    generate the change
  /review code                review the change, then show review/code-review.md
  /test                       run the test suites on the change (/show test: the failures)
  /accept                     record the decision (asks when --verdict is not given)
  /revert                     undo the accepted commit
  /next [--to PHASE] [--override "REASON"]
                              take the next transition (or force one, logged)
  /redo [PHASE]               archive PHASE's artifacts and re-run it
  /status                     the phase, each transition and why it holds or not
  /diff                       show code/diff.patch (paged when long)
  /show ` + strings.Join(ShowArtifacts, "|") + `
                              show an artifact, rendered (paged when long)
  /log [-v]                   the transcript (paged when long)
  /cost                       model calls and their cost
  /advise                     the accept advisor's opinion
  /run [--until PHASE] [--yes] the autopilot: each phase and /next in turn, stopping at human gates
  /verify                     check the transcript's hash chain and state.json
  /init                       create .orch/ at the top of the git repository
  /task new BRIEF | switch ID | list
  /help, /quit
Plain text answers the first open blocking question while planning; with no
current task it is the brief of a new task.
Ctrl-C cancels a running command (or clears the line), Ctrl-D leaves, Tab
completes commands, phases and task ids, the arrows walk the history.
Long output goes through ORCH_PAGER, else PAGER, else less -FRX (q leaves it).
Without a terminal (commands piped in), the session goes on after a failing
command and exits with the code of the last one that failed (0 when none did).
`
}
