// Package fleetlink is orch's link to its fleet (docs/fleet.md, "orch's
// commands and the fleet"): it finds the orch-fleet binary, runs it with
// the project's [fleet] settings and decodes its JSON into typed results,
// so that orch's own commands, the board and the MCP server work on the
// fleet's tasks while the Temporal SDK stays out of the orch binary.
//
// # API
//
// Finding the binary and opening a link:
//
//	Find(root string, f config.Fleet) (string, error) // [fleet] binary, else orch-fleet next to orch, else on PATH
//	Open(root string, f config.Fleet) (*Link, error)
//	Link{Binary, Root, Fleet, Env}                  // a Link may also be built by hand (tests)
//
// Whether a task is the fleet's (no process is started; see Known):
//
//	Known(root, id string) (bool, error)            // this clone has refs/remotes/orch-fleet/tasks/<id>
//	LocalRef(id string) string                      // that ref's name
//
// The fleet's answers, each one run of `orch-fleet --json ...` in Root:
//
//	(*Link).Status(ctx, id) (Status, error)         // what `orch status --json` prints, from the workflow
//	(*Link).Log(ctx, id) ([]task.Event, error)      // what `orch log --json` prints, from the workflow
//	(*Link).List(ctx) (Listing, error)              // running tasks by phase, workers by queue
//	(*Link).Submit(ctx, id, SubmitOptions) (Submitted, error)
//	(*Link).Pull(ctx, id) (Pulled, error)
//	(*Link).Answer(ctx, id, question, text) (GateResult, error)
//	(*Link).Accept(ctx, id, Decision) (GateResult, error)
//	(*Link).Override(ctx, id, reason string, to lifecycle.Phase) (GateResult, error)
//	(*Link).Redo(ctx, id, phase lifecycle.Phase, reason string) (GateResult, error)
//	(*Link).Revert(ctx, id, reason string) (GateResult, error)
//	(*Link).Worker(ctx, args, stdout io.Writer) error  // `orch-fleet worker ARGS`, its output streamed
//
// # Errors
//
// A refusal keeps orch-fleet's message, hints and exit code: with --json,
// orch-fleet writes a failing command's error as one JSON line on stderr
// (Failure), and the link returns it as an *exit.Error of the same exit
// code, which exit.Format shows exactly as orch-fleet would have (a
// refused gate action is exit 3 with orch's own message). Output that is
// not orch-fleet's JSON (a crash, a binary of another version) is an
// error naming the command, its exit code and what it printed; a missing
// binary is ErrNoBinary (exit 2) with a hint saying how to build it.
//
// # Wire format
//
// The types of this package are orch-fleet's --json output (fleet/fleetcli
// encodes them), so both sides of the pipe share one definition.
package fleetlink
