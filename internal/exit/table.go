package exit

import (
	"fmt"
	"strings"
)

// meanings documents every exit code; README.md's table is generated from
// it (go test ./internal/exit -update).
var meanings = []struct {
	code Code
	text string
}{
	{OK, "done"},
	{Internal, "unexpected internal error"},
	{Usage, "usage error: bad flag, bad task id, unknown phase name, blank override reason, `orch accept` without `--verdict` and no terminal to ask in, not in a git repository / no `.orch/`"},
	{Refused, "transition refused: no condition holds, `--from` mismatch, terminal state, a budget exhausted, a phase's command (`orch test`, `orch accept`, …) run in a phase it is not one step from (the message names the command `orch status` suggests) — nothing changed"},
	{Invalid, "invalid state, artifact or configuration (the message names the file, the JSON path or key and what was expected) — nothing changed; for `orch test`: the runner itself failed or no test ran; a model answer that never became valid; for `orch show` and `orch diff`: the artifact does not exist yet"},
	{Busy, "the task is busy: its lock was not acquired within `--wait` (default 10 s); the message names the holder's pid. Or the repository is: a git lock file (`.git/index.lock`, a ref's `.lock`) exists, because another git process is running or a git that was killed or crashed left it; the message names the file — remove it if no git runs, and run the command again"},
	{Gate, "`orch run` stopped at a human gate: answer the open questions or take the accept decision"},
	{Attempts, "`orch run` ran out of codegen attempts (`--max-attempts`)"},
	{Provider, "the model provider failed: no API key, unreachable, an API error or timeout, a `command` provider that failed or printed no valid answer, a `script` with no answer left — nothing was recorded as the phase's result"},
	{Failed, "`orch test --exit-code`: the suites ran and a test failed (without `--exit-code` that is exit 0)"},
	{Interrupted, "interrupted (Ctrl-C or SIGTERM) before the command finished: what was running was stopped (a test run is recorded as cancelled, a phase's model work as not done) and nothing half-done was committed; run the command again"},
}

// Table renders the exit codes as a Markdown table.
func Table() string {
	var b strings.Builder
	b.WriteString("| code | meaning |\n|---|---|\n")
	for _, m := range meanings {
		fmt.Fprintf(&b, "| %d | %s |\n", m.code, m.text)
	}
	return b.String()
}
